/* A Table's rows from its table text or a CSV file (table_rows.c), for its law (table.c) and the fuzzing harness. */
#ifndef MECHFMU_TABLE_ROWS_H
#define MECHFMU_TABLE_ROWS_H

#include <stddef.h>

/* the largest table file read, in bytes (docs/components.md) */
#define NATIVE_TABLE_FILE_LIMIT (16 * 1024 * 1024)

/* rows (t, y): malloc'd arrays of `count` values */
typedef struct {
    double *times, *values;
    size_t count, capacity;
} NativeRows;

/* The rows of a table text ("t, y; t, y; ...": Modelica's matrix syntax), y from column `column` (1 is time):
 * 0, or -1 with `why` (the table's fault, in Python's words). Any `column` is safe: a row without it is refused. */
int native_table_text(const char *text, int column, NativeRows *rows, char *why, size_t why_size);
/* The rows of a CSV file's bytes: a UTF-8 byte-order mark skipped, then UTF-8 text; one row a line, values at ',';
 * blank lines and lines starting with '#' skipped; the first other line a header if all its values are names.
 * 0, or -1 with `why` naming the line, never quoting the file. */
int native_table_csv(const unsigned char *data, size_t size, int column, NativeRows *rows, char *why,
                     size_t why_size);
/* The bytes of the file `name` (relative: in `folder`), refused if it leads out of `folder` (unless
 * `allow_outside`) or is not a regular file of at most NATIVE_TABLE_FILE_LIMIT bytes: the bytes (malloc'd) and
 * *size, or NULL with `why` and *kind 1 (refused) or 2 (cannot be read: the system's error, e.g. a read's EIO). */
unsigned char *native_table_read(const char *name, const char *folder, int allow_outside, size_t *size, int *kind,
                                 char *why, size_t why_size);
void native_rows_free(NativeRows *rows);

#endif
