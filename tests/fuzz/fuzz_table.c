/* sources: table_rows.c expression.c model.c text.c platform.c */
/* A Table's rows from outside bytes (table_rows.c): the first byte chooses the column and the reader, the rest is
 * the table text (Modelica's matrix syntax) or a CSV file's bytes, given directly and read back from a file in a
 * folder of the harness's own (by a relative name); every input gives rows (times not decreasing, every value
 * finite) or a refusal with a message, never a read outside the bytes, a leak or UB. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model.h"
#include "table_rows.h"

const NativeClass *const native_classes[] = {NULL}; /* the runtime's class list: none is instantiated here */

static char folder[256];

static void check(const NativeRows *rows, int result, const char *why) {
    if (result != 0) {
        if (!why[0]) abort(); /* a refusal says why */
        return;
    }
    if (!rows->count) abort(); /* "has no rows" is a refusal */
    for (size_t i = 0; i < rows->count; ++i)
        if (!isfinite(rows->times[i]) || !isfinite(rows->values[i]) || (i && rows->times[i] < rows->times[i - 1]))
            abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    const int column = data[0] % 4 == 3 ? (int)(data[0] / 4) - 20 : 2 + data[0] % 3; /* also 0 and negative */
    const unsigned char *body = data + 1;
    const size_t length = size - 1;
    char why[4096];
    NativeRows rows = {0};
    if (data[0] & 0x80) { /* the table text: a C string (an FMI String holds no NUL) */
        char *text = malloc(length + 1);
        if (!text) return 0;
        memcpy(text, body, length);
        text[length] = '\0';
        why[0] = '\0';
        check(&rows, native_table_text(text, column, &rows, why, sizeof why), why);
        native_rows_free(&rows);
        free(text);
        return 0;
    }
    why[0] = '\0';
    check(&rows, native_table_csv(body, length, column, &rows, why, sizeof why), why);
    native_rows_free(&rows);
    if (!folder[0]) {
        char here[128]; /* the working directory: the test's own temporary folder, removed after it */
        snprintf(folder, sizeof folder, "%s/mechfmu_fuzz_table_%ld", getcwd(here, sizeof here) ? here : "/tmp",
                 (long)getpid());
        mkdir(folder, 0700);
        mkdir(strcat(strcpy(why, folder), "/sub"), 0700);
    }
    char path[320];
    snprintf(path, sizeof path, "%s/table.csv", folder);
    FILE *file = fopen(path, "wb");
    if (!file) return 0;
    fwrite(body, 1, length, file);
    fclose(file);
    size_t read = 0;
    int kind = 0;
    why[0] = '\0';
    unsigned char *bytes = native_table_read("sub/../none/.././table.csv", folder, 0, &read, &kind, why, sizeof why);
    if (!bytes || read != length || memcmp(bytes, body, length) != 0) abort(); /* the same bytes, whole */
    free(bytes);
    if (native_table_read("../outside.csv", folder, 0, &read, &kind, why, sizeof why) || kind != 1) abort();
    return 0;
}
