/* Text in and out, the same in every locale and on every thread (text.c): numbers as Python and as an engineer write
 * them, Python's repr of a text, decimal numbers read strictly, a strict JSON object. */
#ifndef MECHFMU_TEXT_H
#define MECHFMU_TEXT_H

#include <stddef.h>

/* Python's repr of a float ("1.0", "1e-05", "inf"): the shortest digits that read back as the same double. */
void native_repr(double x, char *out, size_t size);

/* components/number_text.py's number(): a value the user gave as an engineer writes it, the shortest text that
 * reads back ("1", "0.003", "1e-09") unless that takes more than NATIVE_NUMBER_DIGITS significant digits (a value
 * computed in floating point: -392.40000000000003 is "-392.4"); '.' whatever the locale. */
#define NATIVE_NUMBER_DIGITS 12
void native_number(double x, char *out, size_t size);
/* components/number_text.py's measured(): a time or a computed value, %.6g with '.' whatever the locale. */
void native_measured(double x, char *out, size_t size);
/* number_text.py's number() of a tuple ("(1, 2.5)") or, with `list`, a list ("[1, 2.5]") of `count` floats */
void native_number_sequence(const double *values, size_t count, int list, char *out, size_t size);

/* Python's repr of a str ('text', quoted and escaped), cut to fit `size`. */
void native_repr_text(const char *text, char *out, size_t size);

/* A decimal number ([+-]digits[.digits][e[+-]digits], digits on one side of the point at least; no hex, inf or
 * nan) read whole from the `length` bytes at `text` (no NUL needed) whatever the process's LC_NUMERIC, correctly
 * rounded (an overflow gives an infinity): 0 and *value, or -1 for any other text. Thread-safe. */
int native_read_decimal(const char *text, size_t length, double *value);

/* A member of a strict JSON object (native_json_object): its name and, for a string, its text, decoded (UTF-8,
 * NUL-terminated; the lengths count a \u0000 inside), the kind of its value and a number's value. */
enum { JSON_NUMBER, JSON_INTEGER, JSON_TRUE, JSON_FALSE, JSON_STRING };
typedef struct {
    char *name, *text;
    size_t name_length, text_length;
    int kind;             /* JSON_INTEGER: a number without fraction or exponent */
    double number;        /* a number's value (true 1, false 0) */
} JsonMember;

/* The members, in their order, of the JSON object (RFC 8259, read strictly) in the `size` bytes at `bytes`, whose
 * values are numbers, true, false or strings (null, arrays and objects refused), no name twice, nothing after it:
 * 0 with *members (native_json_free) and *count, or -1 with `why` set. */
int native_json_object(const char *bytes, size_t size, JsonMember **members, size_t *count, char *why,
                       size_t why_size);
void native_json_free(JsonMember *members, size_t count);

#endif
