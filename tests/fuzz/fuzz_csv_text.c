/* sources: ../../mechfmu/master/csv_text.c */
/* The result rows' text (csv_rows): any bytes as doubles, formatted into a buffer of exactly the room asked for
 * (AddressSanitizer reports a byte past it) and into one a byte short (refused whole, -1); every value reads back
 * (strtod) to the same double, a NaN to a NaN; a line ends each row, a comma each other value. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int64_t csv_rows(const double *values, int64_t rows, int64_t columns, char *out, int64_t room);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const int64_t count = (int64_t)(size / sizeof(double));
    if (count == 0)
        return 0;
    double *values = malloc((size_t)count * sizeof(double));
    memcpy(values, data, (size_t)count * sizeof(double));
    const int64_t columns = 1 + (int64_t)data[size - 1] % count, rows = count / columns;
    const int64_t room = 26 * rows * columns;
    char *text = malloc((size_t)room + 1);
    const int64_t written = csv_rows(values, rows, columns, text, room);
    if (rows > 0 && (written <= 0 || written > room))
        abort();
    text[written] = '\0';
    const char *p = text;
    for (int64_t i = 0; i < rows * columns; i++) {
        char *end;
        const double back = strtod(p, &end);
        if (end == p || (*end != ',' && *end != '\n') || (*end == '\n') != ((i + 1) % columns == 0))
            abort();
        if (isnan(values[i]) ? !isnan(back) : memcmp(&back, &values[i], sizeof(double)) != 0)
            abort();
        p = end + 1;
    }
    if (p != text + written)
        abort();
    free(text);
    if (rows > 0) {
        char *short_of_one = malloc((size_t)written - 1 > 0 ? (size_t)written - 1 : 1);
        if (csv_rows(values, rows, columns, short_of_one, written - 1) != -1)
            abort();
        free(short_of_one);
    }
    free(values);
    return 0;
}
