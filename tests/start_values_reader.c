/* The runtime's JSON reader (components/native/text.c native_json_object) as a program, for tests/test_start_values.py:
 * the file argv[1] holds cases, each an 8-byte little-endian length and that many bytes; for each case one line:
 * "refused <why>", or "object" and per member a tab, the name's bytes in hex, ':', its kind (i integer, n number,
 * t true, f false, s string) and ':' with the number's 64 bits in hex or the string's bytes in hex. The process
 * takes its locale from the environment (LC_ALL): the reader must read numbers the same in every one. */
#include <locale.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz_class.h"

static void hex(const char *bytes, size_t length) {
    for (size_t i = 0; i < length; ++i) printf("%02x", (unsigned char)bytes[i]);
}

int main(int argc, char **argv) {
    setlocale(LC_ALL, "");
    FILE *file = argc == 2 ? fopen(argv[1], "rb") : NULL;
    if (!file) return 2;
    unsigned char head[8];
    while (fread(head, 1, 8, file) == 8) {
        size_t length = 0;
        for (int i = 7; i >= 0; --i) length = length << 8 | head[i];
        char *bytes = malloc(length ? length : 1);
        if (!bytes || fread(bytes, 1, length, file) != length) return 2;
        JsonMember *members;
        size_t count;
        char why[2048];
        if (native_json_object(bytes, length, &members, &count, why, sizeof why) != 0) {
            printf("refused %s\n", why);
        } else {
            printf("object");
            for (size_t i = 0; i < count; ++i) {
                printf("\t");
                hex(members[i].name, members[i].name_length);
                printf(":%c:", "nitfs"[members[i].kind]);
                if (members[i].kind == JSON_STRING) hex(members[i].text, members[i].text_length);
                else {
                    uint64_t bits;
                    memcpy(&bits, &members[i].number, sizeof bits);
                    printf("%016llx", (unsigned long long)bits);
                }
            }
            printf("\n");
            native_json_free(members, count);
        }
        free(bytes);
    }
    fclose(file);
    return 0;
}
