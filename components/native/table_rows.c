/* A Table's rows (components/table.py, table.c): from its table text or from the bytes of a CSV file, and the file
 * itself, read only inside its folder. The text is read as Python reads it (UTF-8, str.splitlines, str.strip and
 * str.split on Unicode white space, float()'s grammar, numbers with '.' whatever the locale), the file with the same
 * refusals (outside its folder, not a regular file, too large), every read checked, and every error in its words.
 * Nothing here is shared between threads: no static buffer, no strtok, no locale, no global error. */
#define _GNU_SOURCE /* O_NOFOLLOW, O_CLOEXEC, realpath */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#ifdef _WIN32
#define WIN32_LEAN_AND_MEAN
#define NOGDI
#include <io.h>
#include <windows.h>
#define SEPARATOR '\\'
#ifndef PATH_MAX
#define PATH_MAX 4096
#endif
#else
#include <unistd.h>
#define SEPARATOR '/'
#endif

#include "expression.h"
#include "model.h"
#include "numbers.h"
#include "table_rows.h"

#define MAX_FILE_BYTES NATIVE_TABLE_FILE_LIMIT
#define OUTSIDE_HINT                                                                                                 \
    "put the file into the FMU's resources/ folder (in-process: the scenario's folder) and give its relative name, " \
    "or set allowOutsideFiles = true to read it where it is"

/* --- Python's text ---------------------------------------------------------------------------------------- */

/* The length of a UTF-8 white-space character at s (str.isspace), 0 if there is none. */
static size_t space(const unsigned char *s, const unsigned char *end) {
    if (s >= end) return 0;
    if (*s == ' ' || (*s >= '\t' && *s <= '\r') || (*s >= 0x1c && *s <= 0x1f)) return 1;
    if (end - s >= 2 && s[0] == 0xc2 && (s[1] == 0x85 || s[1] == 0xa0)) return 2;
    if (end - s >= 3) {
        if (s[0] == 0xe1 && s[1] == 0x9a && s[2] == 0x80) return 3;                                   /* U+1680 */
        if (s[0] == 0xe2 && s[1] == 0x80 && ((s[2] >= 0x80 && s[2] <= 0x8a) || s[2] == 0xa8 || s[2] == 0xa9
                                             || s[2] == 0xaf))
            return 3;                                                                                    /* U+2000.. */
        if (s[0] == 0xe2 && s[1] == 0x81 && s[2] == 0x9f) return 3;                                   /* U+205F */
        if (s[0] == 0xe3 && s[1] == 0x80 && s[2] == 0x80) return 3;                                   /* U+3000 */
    }
    return 0;
}

/* The length of a line boundary at s (str.splitlines), 0 if there is none. */
static size_t line_break(const unsigned char *s, const unsigned char *end) {
    if (s >= end) return 0;
    if (*s == '\r') return end - s >= 2 && s[1] == '\n' ? 2 : 1;
    if (*s == '\n' || *s == '\v' || *s == '\f' || (*s >= 0x1c && *s <= 0x1e)) return 1;
    if (end - s >= 2 && s[0] == 0xc2 && s[1] == 0x85) return 2;
    if (end - s >= 3 && s[0] == 0xe2 && s[1] == 0x80 && (s[2] == 0xa8 || s[2] == 0xa9)) return 3;
    return 0;
}

/* The slice [*start, *end) stripped of white space at both ends (str.strip). */
static void strip(const unsigned char **start, const unsigned char **end) {
    size_t k;
    while ((k = space(*start, *end)) > 0) *start += k;
    for (;;) { /* from the end: white space is at most 3 bytes */
        size_t found = 0;
        for (size_t back = 1; back <= 3 && !found; ++back)
            if ((size_t)(*end - *start) >= back && space(*end - back, *end) == back) found = back;
        if (!found) break;
        *end -= found;
    }
}

/* Python's float() of the text [s, end): 0 and *value, or -1 (not a number). */
static int py_float(const unsigned char *s, const unsigned char *end, double *value) {
    strip(&s, &end);
    size_t length = (size_t)(end - s);
    if (!length || length > 400 || memchr(s, 0, length)) return -1; /* a NUL (valid UTF-8) would end the text */
    char text[512], clean[512];
    memcpy(text, s, length);
    text[length] = '\0';
    const char *p = text + (text[0] == '+' || text[0] == '-');
    const size_t rest = strlen(p); /* the words in ASCII's cases (strcasecmp would follow the locale's) */
    if (rest && (native_word_at(p, 0, rest, "inf") == rest || native_word_at(p, 0, rest, "infinity") == rest
                 || native_word_at(p, 0, rest, "nan") == rest)) {
        *value = native_word_at(p, 0, rest, "nan") ? NAN : INFINITY;
        if (text[0] == '-') *value = -*value;
        return 0;
    }
    size_t k = 0, digits = 0;
    clean[k++] = text[0] == '-' ? '-' : '+';
    /* digits with single underscores between them; a point; an exponent */
    int part = 0; /* 0 integer, 1 fraction, 2 exponent */
    for (const char *c = p; *c; ++c) {
        if (*c >= '0' && *c <= '9') {
            clean[k++] = *c;
            if (part < 2) ++digits;
        } else if (*c == '_') {
            if (!(c > p && c[-1] >= '0' && c[-1] <= '9' && c[1] >= '0' && c[1] <= '9')) return -1;
        } else if (*c == '.' && part == 0) {
            clean[k++] = '.';
            part = 1;
        } else if ((*c == 'e' || *c == 'E') && part < 2 && digits) {
            clean[k++] = 'e';
            part = 2;
            if (c[1] == '+' || c[1] == '-') clean[k++] = *++c;
            if (!(c[1] >= '0' && c[1] <= '9')) return -1;
        } else {
            return -1;
        }
    }
    if (!digits) return -1;
    clean[k] = '\0';
    return native_parse_decimal(clean, k, value) == k ? 0 : -1; /* '.' whatever the host's locale */
}

/* The byte offset of the first invalid UTF-8 sequence (Python's strict decoder), or -1 if the text is valid. */
static long invalid_utf8(const unsigned char *s, size_t size) {
    size_t i = 0;
    while (i < size) {
        unsigned char c = s[i];
        size_t need;
        unsigned int low = 0x80, high = 0xbf;
        if (c < 0x80) { ++i; continue; }
        if (c >= 0xc2 && c <= 0xdf) need = 1;
        else if (c == 0xe0) need = 2, low = 0xa0;
        else if ((c >= 0xe1 && c <= 0xec) || c == 0xee || c == 0xef) need = 2;
        else if (c == 0xed) need = 2, high = 0x9f;
        else if (c == 0xf0) need = 3, low = 0x90;
        else if (c >= 0xf1 && c <= 0xf3) need = 3;
        else if (c == 0xf4) need = 3, high = 0x8f;
        else return (long)i;
        for (size_t k = 1; k <= need; ++k) {
            if (i + k >= size) return (long)i;
            unsigned int b = s[i + k];
            if (k == 1 ? (b < low || b > high) : (b < 0x80 || b > 0xbf)) return (long)i;
        }
        i += need + 1;
    }
    return -1;
}

/* --- the rows ----------------------------------------------------------------------------------------- */

typedef NativeRows Rows;

static int add_row(Rows *r, double t, double y) {
    if (r->count == r->capacity) {
        size_t capacity = r->capacity ? 2 * r->capacity : 64;
        double *times = realloc(r->times, capacity * sizeof *times), *values;
        if (!times) return -1;
        r->times = times;
        if (!(values = realloc(r->values, capacity * sizeof *values))) return -1;
        r->values = values;
        r->capacity = capacity;
    }
    r->times[r->count] = t, r->values[r->count++] = y;
    return 0;
}

/* One row's tokens, split by `comma` (CSV: at every ',') or at runs of white space and ','. */
typedef struct {
    const unsigned char *start[1024], *end[1024];
    size_t count;
} Tokens;

static int tokens_of(const unsigned char *s, const unsigned char *end, int csv, Tokens *t) {
    t->count = 0;
    if (csv) {
        const unsigned char *from = s;
        for (const unsigned char *c = s;; ++c)
            if (c == end || *c == ',') {
                if (t->count == 1024) return -1;
                t->start[t->count] = from, t->end[t->count++] = c;
                if (c == end) break;
                from = c + 1;
            }
        return 0;
    }
    const unsigned char *c = s;
    for (;;) {
        size_t k;
        while (c < end && (*c == ',' || (k = space(c, end)) > 0)) c += *c == ',' ? 1 : k;
        if (c >= end) return 0;
        const unsigned char *from = c;
        while (c < end && *c != ',' && !space(c, end)) ++c;
        if (t->count == 1024) return -1;
        t->start[t->count] = from, t->end[t->count++] = c;
    }
}

/* A CSV header's value: a name, which no number is and none begins like (a digit, a sign, a point), or nothing. */
static int is_name(const unsigned char *s, const unsigned char *end) {
    double number;
    strip(&s, &end);
    return s == end || (!strchr("0123456789+-.", *s) && py_float(s, end, &number) != 0);
}

/* parse_rows of table.py: 0 with the rows, or -1 with `why` (its words) */
static int parse_rows(const unsigned char *text, size_t size, int column, int csv, Rows *rows, char *why,
                      size_t why_size) {
    if (column < 1) return snprintf(why, why_size, "column %d is not a column (columns count from 1)", column), -1;
    const unsigned char *end = text + size;
    Tokens *tokens = malloc(sizeof *tokens);
    if (!tokens) return snprintf(why, why_size, "out of memory"), -1;
    int index = 0, result = 0;
    size_t number = 0;
    const unsigned char *body = text, *body_end = end;
    if (!csv) { /* strip, one '[' and one ']' off, then rows at ';' and new lines */
        strip(&body, &body_end);
        if (body < body_end && *body == '[') ++body;
        if (body < body_end && body_end[-1] == ']') --body_end;
    }
    const unsigned char *line = body;
    while (line <= body_end && result == 0) {
        const unsigned char *stop = line;
        size_t k = 0;
        if (csv) while (stop < body_end && !(k = line_break(stop, body_end))) ++stop;
        else while (stop < body_end && *stop != ';' && *stop != '\n') ++stop;
        const unsigned char *next = stop < body_end ? stop + (csv ? k : 1) : body_end + 1;
        const unsigned char *a = line, *b = stop;
        strip(&a, &b);
        if (csv) ++number;
        line = next;
        if (a == b || (csv && *a == '#')) continue;
        if (!csv) ++number;
        char where[64];
        snprintf(where, sizeof where, "%s %zu", csv ? "line" : "row", number);
        if (tokens_of(a, b, csv, tokens) != 0) {
            snprintf(why, why_size, "%s has more than 1024 values", where);
            result = -1;
            break;
        }
        double numbers[1024];
        size_t count = tokens->count, bad = 0, names = 0;
        for (size_t i = 0; i < count; ++i) {
            bad += py_float(tokens->start[i], tokens->end[i], &numbers[i]) != 0;
            names += is_name(tokens->start[i], tokens->end[i]);
        }
        if (bad) {
            if (csv && index == 0 && names == count) {
                ++index;
                continue; /* a header: the first line, all of its values names */
            }
            if (csv) {
                snprintf(why, why_size, "line %zu is not a list of numbers separated by ','", number);
            } else {
                char joined[2048], repr[4200];
                size_t used = 0;
                joined[0] = '\0';
                for (size_t i = 0; i < count && used < sizeof joined; ++i)
                    used += (size_t)snprintf(joined + used, sizeof joined - used, "%s%.*s", i ? "," : "",
                                             (int)(tokens->end[i] - tokens->start[i]), tokens->start[i]);
                native_repr_text(joined, repr, sizeof repr);
                snprintf(why, why_size, "row %zu %s is not a list of numbers", number, repr);
            }
            result = -1;
            break;
        }
        ++index;
        if (count < (size_t)column) {
            snprintf(why, why_size, "%s has %zu values, column %d is wanted", where, count, column);
            result = -1;
            break;
        }
        for (size_t i = 0; i < count; ++i)
            if (!isfinite(numbers[i])) {
                snprintf(why, why_size, "%s has a value that is not finite", where);
                result = -1;
            }
        if (result) break;
        const double t = numbers[0], y = numbers[column - 1];
        if (rows->count && t < rows->times[rows->count - 1]) {
            char now[40], before[40];
            native_number(t, now, sizeof now), native_number(rows->times[rows->count - 1], before, sizeof before);
            if (csv) snprintf(why, why_size, "time is not monotonic: line %zu has a time before the line above it", number);
            else snprintf(why, why_size, "time is not monotonic: row %zu has t = %s after t = %s", number, now, before);
            result = -1;
            break;
        }
        if (rows->count >= 2 && t == rows->times[rows->count - 1] && t == rows->times[rows->count - 2]) {
            char now[40];
            native_number(t, now, sizeof now);
            if (csv) snprintf(why, why_size, "line %zu is the third line at one time (two make a jump, no more)", number);
            else snprintf(why, why_size, "time t = %s appears three times (two rows make a jump, no more)", now);
            result = -1;
            break;
        }
        if (add_row(rows, t, y) != 0) {
            snprintf(why, why_size, "out of memory");
            result = -1;
        }
    }
    free(tokens);
    if (result == 0 && !rows->count) {
        snprintf(why, why_size, "has no rows");
        result = -1;
    }
    return result;
}

/* --- the file ------------------------------------------------------------------------------------------- */

#ifdef _WIN32
static wchar_t *wide(const char *text) {
    int n = MultiByteToWideChar(CP_UTF8, 0, text, -1, NULL, 0);
    wchar_t *out = n > 0 ? malloc((size_t)n * sizeof *out) : NULL;
    if (out) MultiByteToWideChar(CP_UTF8, 0, text, -1, out, n);
    return out;
}

static char *narrow(const wchar_t *text) {
    int n = WideCharToMultiByte(CP_UTF8, 0, text, -1, NULL, 0, NULL, NULL);
    char *out = n > 0 ? malloc((size_t)n) : NULL;
    if (out) WideCharToMultiByte(CP_UTF8, 0, text, -1, out, n, NULL, NULL);
    return out;
}

/* os.path.realpath: the final path of an existing file or folder (links resolved), else the full path */
static char *real_path(const char *path) {
    wchar_t *w = wide(path), full[32768];
    if (!w) return NULL;
    char *out = NULL;
    HANDLE h = CreateFileW(w, 0, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL, OPEN_EXISTING,
                           FILE_FLAG_BACKUP_SEMANTICS, NULL);
    if (h != INVALID_HANDLE_VALUE) {
        DWORD n = GetFinalPathNameByHandleW(h, full, 32768, FILE_NAME_NORMALIZED);
        CloseHandle(h);
        if (n > 0 && n < 32768) {
            const wchar_t *p = full;
            if (!wcsncmp(p, L"\\\\?\\UNC\\", 8)) { /* \\?\UNC\server -> \\server */
                p += 6;
                full[6] = L'\\';
            } else if (!wcsncmp(p, L"\\\\?\\", 4)) {
                p += 4;
            }
            out = narrow(p);
        }
    }
    if (!out && _wfullpath(full, w, 32768)) out = narrow(full);
    free(w);
    return out;
}

static int same_folder_prefix(const char *path, const char *root) { /* Windows compares paths without case */
    size_t n = strlen(root);
    return !_strnicmp(path, root, n) && (path[n] == '\\' || path[n] == '/' || (n && root[n - 1] == '\\'));
}
#else
/* os.path.realpath (not strict): the longest existing prefix resolved, the rest joined with '..' applied */
static char *real_path(const char *path) {
    char *copy = strdup(path), *resolved = NULL;
    if (!copy) return NULL;
    size_t length = strlen(copy);
    char *cut = copy + length;
    for (;;) { /* the longest prefix that exists */
        char saved = *cut;
        *cut = '\0';
        resolved = realpath(copy[0] ? copy : "/", NULL);
        *cut = saved;
        if (resolved || cut == copy) break;
        while (cut > copy && *--cut != '/') {}
    }
    if (!resolved) {
        free(copy);
        return NULL;
    }
    size_t used = strlen(resolved), size = used + length + 2;
    char *out = realloc(resolved, size);
    if (!out) {
        free(resolved);
        free(copy);
        return NULL;
    }
    /* the rest, part by part (no strtok: its position is one for the whole process, shared by every thread) */
    for (const char *part = cut; *part;) {
        if (*part == '/') {
            ++part;
            continue;
        }
        const size_t n = strcspn(part, "/");
        if (n == 2 && part[0] == '.' && part[1] == '.') { /* up: drop the last name, never the root */
            while (used > 1 && out[used - 1] != '/') --used;
            if (used > 1) --used;
        } else if (!(n == 1 && part[0] == '.')) {
            if (used > 1 || out[0] != '/') out[used++] = '/';
            memcpy(out + used, part, n);
            used += n;
        }
        out[used] = '\0';
        part += n;
    }
    free(copy);
    return out;
}


static int same_folder_prefix(const char *path, const char *root) {
    size_t n = strlen(root);
    return !strncmp(path, root, n) && (path[n] == '/' || !strcmp(root, "/"));
}
#endif

/* the file's status, opened file and reads: POSIX, or Windows' wide-character calls */
#ifdef _WIN32
typedef struct _stat64 Status;
static int status_of(const char *path, Status *s) {
    wchar_t *w = wide(path);
    int r = w ? _wstat64(w, s) : -1;
    free(w);
    return r;
}
static int open_file(const char *path) {
    wchar_t *w = wide(path);
    int r = w ? _wopen(w, _O_RDONLY | _O_BINARY | _O_NOINHERIT) : -1;
    free(w);
    return r;
}
#define status_of_open _fstat64
#define read_some(d, b, n) _read(d, b, (unsigned)(n))
#define close_file _close
#define IS_REGULAR(m) (((m) & _S_IFMT) == _S_IFREG)
#else
typedef struct stat Status;
static int status_of(const char *path, Status *s) { return stat(path, s); }
static int open_file(const char *path) { return open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC); }
#define status_of_open fstat
#define read_some(d, b, n) read(d, b, n)
#define close_file close
#define IS_REGULAR(m) S_ISREG(m)
#endif

/* The system's words for the error `code` (strerror_r: strerror may share one buffer between threads). */
static void error_text(int code, char *out, size_t size) {
#ifdef _WIN32
    if (strerror_s(out, size, code) != 0) snprintf(out, size, "error %d", code);
#elif defined(__GLIBC__) && defined(_GNU_SOURCE)
    const char *text = strerror_r(code, out, size); /* GNU's: a static text or `out` */
    if (text != out) snprintf(out, size, "%s", text);
#else
    if (strerror_r(code, out, size) != 0) snprintf(out, size, "error %d", code);
#endif
}

/* The whole of an open file whose status said `expected` bytes: its bytes (malloc'd, one more for a NUL) and
 * *got, or NULL with errno (a read error such as EIO, or ENOMEM) or, if it holds more than the limit, *grew. */
static unsigned char *read_all(int descriptor, size_t expected, size_t *got, int *grew) {
    size_t capacity = (expected < 64 ? 64 : expected) + 1; /* + 1: the end is seen in the first pass */
    unsigned char *data = malloc(capacity + 1);
    *got = 0, *grew = 0;
    while (data) {
        if (*got == capacity) { /* it grew since its status: on, up to one byte over the limit */
            if (capacity > MAX_FILE_BYTES) {
                *grew = 1;
                break;
            }
            size_t more = capacity * 2 > (size_t)MAX_FILE_BYTES + 1 ? (size_t)MAX_FILE_BYTES + 1 : capacity * 2;
            unsigned char *bigger = realloc(data, more + 1);
            if (!bigger) break;
            data = bigger, capacity = more;
        }
        const long chunk = (long)read_some(descriptor, data + *got, capacity - *got);
        if (chunk == 0) return data;
        if (chunk > 0) *got += (size_t)chunk;
        else if (errno != EINTR) break; /* a read error: what it is, never taken for the file's end */
    }
    const int saved = errno;
    free(data);
    errno = data ? saved : ENOMEM;
    return NULL;
}

/* read_table_file: the file's bytes (malloc'd) and *size, or NULL with `why` and *kind: 1 refused (TableFileError),
 * 2 unreadable (OSError) */
static unsigned char *read_file(const char *name, const char *folder, int allow_outside, size_t *size, int *kind,
                                char *why, size_t why_size) {
#ifdef _WIN32
    const int absolute = name[0] == '/' || name[0] == '\\' || (name[0] && name[1] == ':');
#else
    const int absolute = name[0] == '/';
#endif
    const size_t folder_length = strlen(folder), joined_size = folder_length + strlen(name) + 2;
    const char last = folder_length ? folder[folder_length - 1] : 0;
    char *joined = malloc(joined_size); /* as long as the name is: a cut name would be another file */
    if (joined && absolute) snprintf(joined, joined_size, "%s", name);
    else if (joined) snprintf(joined, joined_size, "%s%s%s", folder, last == '/' || last == SEPARATOR ? "" : (char[]){SEPARATOR, 0},
                              name);
    errno = ENOMEM;
    char *path = joined ? real_path(joined) : NULL, *root = real_path(folder);
    const int problem = errno;
    free(joined);
    unsigned char *data = NULL;
    char *path_repr = NULL, *root_repr = NULL;
    *kind = 2;
    if (!path || !root) {
        error_text(problem, why, why_size);
        goto done;
    }
    const size_t path_repr_size = 4 * strlen(path) + 16, root_repr_size = 4 * strlen(root) + 16;
    path_repr = malloc(path_repr_size), root_repr = malloc(root_repr_size);
    if (!path_repr || !root_repr) {
        error_text(ENOMEM, why, why_size);
        goto done;
    }
    native_repr_text(path, path_repr, path_repr_size);
    native_repr_text(root, root_repr, root_repr_size);
    const int inside = !strcmp(path, root) || same_folder_prefix(path, root);
    if (!allow_outside && !inside) {
        *kind = 1;
        snprintf(why, why_size, "leads to %s, outside the folder %s table files are read from: " OUTSIDE_HINT,
                 path_repr, root_repr);
        goto done;
    }
    Status status;
    if (status_of(path, &status) != 0) {
        error_text(errno, why, why_size);
        goto done;
    }
    if (!IS_REGULAR(status.st_mode)) {
        *kind = 1;
        snprintf(why, why_size, "leads to %s, which is not a regular file: give a CSV file", path_repr);
        goto done;
    }
    int descriptor = open_file(path);
    if (descriptor < 0) {
        error_text(errno, why, why_size);
        goto done;
    }
    if (status_of_open(descriptor, &status) != 0 || !IS_REGULAR(status.st_mode)) {
        *kind = 1;
        snprintf(why, why_size, "leads to %s, which is not a regular file: give a CSV file", path_repr);
        close_file(descriptor);
        goto done;
    }
    if (status.st_size > MAX_FILE_BYTES) {
        *kind = 1;
        snprintf(why, why_size, "has %lld bytes, more than the %d a table file may have: shorten the table or thin "
                 "out its rows", (long long)status.st_size, MAX_FILE_BYTES);
        close_file(descriptor);
        goto done;
    }
    size_t got = 0;
    int grew = 0;
    data = read_all(descriptor, (size_t)status.st_size, &got, &grew);
    const int read_error = errno;
    close_file(descriptor);
    if (grew) {
        *kind = 1;
        snprintf(why, why_size, "has more than the %d bytes a table file may have (it grew while read): shorten the "
                 "table or thin out its rows", MAX_FILE_BYTES);
        goto done;
    }
    if (!data) {
        error_text(read_error, why, why_size);
        goto done;
    }
    *size = got;
done:
    free(path);
    free(root);
    free(path_repr);
    free(root_repr);
    return data;
}

/* --- what table.c calls ---------------------------------------------------------------------------------- */

int native_table_text(const char *text, int column, NativeRows *rows, char *why, size_t why_size) {
    return parse_rows((const unsigned char *)text, strlen(text), column, 0, rows, why, why_size);
}

int native_table_csv(const unsigned char *data, size_t size, int column, NativeRows *rows, char *why,
                     size_t why_size) {
    /* a UTF-8 byte-order mark (spreadsheets write one) is no part of the first line */
    const size_t skip = size >= 3 && data[0] == 0xef && data[1] == 0xbb && data[2] == 0xbf ? 3 : 0;
    const long bad = invalid_utf8(data + skip, size - skip);
    if (bad < 0) return parse_rows(data + skip, size - skip, column, 1, rows, why, why_size);
    size_t line = 1; /* the line breaks the rows are split at */
    for (size_t i = skip, k; i < skip + (size_t)bad; i += k ? k : 1)
        line += (k = line_break(data + i, data + skip + (size_t)bad)) > 0;
    snprintf(why, why_size, "line %zu is not UTF-8 text", line);
    return -1;
}

unsigned char *native_table_read(const char *name, const char *folder, int allow_outside, size_t *size, int *kind,
                                 char *why, size_t why_size) {
    return read_file(name, folder, allow_outside, size, kind, why, why_size);
}

void native_rows_free(NativeRows *rows) {
    free(rows->times);
    free(rows->values);
    rows->times = rows->values = NULL;
    rows->count = rows->capacity = 0;
}
