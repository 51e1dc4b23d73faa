/* Numbers as text without the C library's locale, and numbers as FMI Integers only where they are ones.
 *
 * strtod and printf follow the process's LC_NUMERIC, which the host owns: a Modelica tool running with a German
 * locale makes strtod("0.5") read 0 and printf("%g", 0.5) write "0,5", and setlocale may be called on another
 * thread at any time. The functions here read and write the C locale's '.' whatever the locale is, keep no state
 * and take no lock: the decimal text is rewritten as an integer mantissa and a power of ten ("12.5e3" as "125e2"),
 * which strtod reads the same (and as correctly rounded) in every locale, for it holds no decimal point; a printed
 * number's decimal point is found by position, not by the locale's name for it.
 * Header only (static inline): every C file of the runtime may include it without a change to what is compiled. */
#ifndef MECHFMU_NUMBERS_H
#define MECHFMU_NUMBERS_H

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* significant digits kept; the rest are folded into one sticky digit, which keeps the rounding: a value halfway
 * between two doubles has at most 767 significant digits */
#define NATIVE_DIGITS_KEPT 800
/* an exponent beyond this makes 0 or infinity of any mantissa of the kept length (saturated while read) */
#define NATIVE_EXPONENT_CAP 100000000L

static inline int native_is_digit(char c) { return c >= '0' && c <= '9'; }

/* The length of `word` (lower case) at text[i, length) in any case, 0 if it is not there. */
static inline size_t native_word_at(const char *text, size_t i, size_t length, const char *word) {
    size_t n = strlen(word);
    if (length - i < n) return 0;
    for (size_t k = 0; k < n; ++k)
        if ((text[i + k] | 0x20) != word[k]) return 0;
    return n;
}

/* The decimal number at the start of text[0, length): [+-] (digits [. [digits]] | . digits) [(e|E) [+-] digits],
 * or [+-] inf, infinity, nan in any case; read as strtod reads it in the C locale (correctly rounded, to ±inf or
 * ±0 beyond the range). The number of bytes it takes (the longest number there) and *value, or 0 (no number;
 * *value unchanged). No white space is skipped, and no hexadecimal is read. */
static inline size_t native_parse_decimal(const char *text, size_t length, double *value) {
    size_t i = 0;
    const int negative = length > 0 && text[0] == '-';
    if (length > 0 && (text[0] == '+' || text[0] == '-')) ++i;
    size_t word;
    if ((word = native_word_at(text, i, length, "infinity")) || (word = native_word_at(text, i, length, "inf"))
        || (word = native_word_at(text, i, length, "nan"))) {
        *value = text[i] == 'n' || text[i] == 'N' ? NAN : INFINITY;
        if (negative) *value = -*value;
        return i + word;
    }
    char digits[NATIVE_DIGITS_KEPT + 2];
    size_t kept = 0, mantissa = 0;
    int sticky = 0;
    long long shift = 0; /* the value is digits * 10^(shift + exponent) */
    for (; i < length && native_is_digit(text[i]); ++i, ++mantissa) {
        if (kept == 0 && text[i] == '0') continue; /* a leading zero */
        if (kept < NATIVE_DIGITS_KEPT) digits[kept++] = text[i];
        else sticky |= text[i] != '0', ++shift;
    }
    if (i < length && text[i] == '.') {
        size_t j = i + 1;
        for (; j < length && native_is_digit(text[j]); ++j, ++mantissa) {
            if (kept == 0 && text[j] == '0') --shift; /* a zero before the first significant digit */
            else if (kept < NATIVE_DIGITS_KEPT) digits[kept++] = text[j], --shift;
            else sticky |= text[j] != '0';
        }
        if (mantissa) i = j; /* "." alone is no number */
    }
    if (!mantissa) return 0;
    if (i < length && (text[i] == 'e' || text[i] == 'E')) {
        size_t j = i + 1;
        const int minus = j < length && text[j] == '-';
        if (j < length && (text[j] == '+' || text[j] == '-')) ++j;
        if (j < length && native_is_digit(text[j])) {
            long long exponent = 0;
            for (; j < length && native_is_digit(text[j]); ++j)
                if (exponent < NATIVE_EXPONENT_CAP) exponent = 10 * exponent + (text[j] - '0');
            shift += minus ? -exponent : exponent;
            i = j;
        }
    }
    if (!kept) {
        *value = negative ? -0.0 : 0.0;
        return i;
    }
    if (sticky) digits[kept++] = '1', --shift; /* one more digit: one less power of ten */
    if (shift > NATIVE_EXPONENT_CAP) shift = NATIVE_EXPONENT_CAP;
    if (shift < -NATIVE_EXPONENT_CAP) shift = -NATIVE_EXPONENT_CAP;
    char plain[NATIVE_DIGITS_KEPT + 40]; /* no decimal point: the same in every locale */
    snprintf(plain, sizeof plain, "%s%.*se%lld", negative ? "-" : "", (int)kept, digits, shift);
    *value = strtod(plain, NULL);
    return i;
}

/* A number printf wrote (%e, %f, %g: a sign, digits, the locale's decimal point, an exponent), its decimal point
 * made '.' in place: the locale's may be another character, even several bytes (found as what stands between two
 * digits, or after the last digit before an exponent, that is no digit, sign or exponent). */
static inline void native_c_decimal_point(char *text) {
    for (char *c = text; *c; ++c) {
        if (!native_is_digit(*c)) continue;
        char *after = c + 1, *stop = after;
        while (*stop && !native_is_digit(*stop) && *stop != 'e' && *stop != 'E' && *stop != '+' && *stop != '-')
            ++stop;
        if (stop == after) continue;
        *after = '.';
        memmove(after + 1, stop, strlen(stop) + 1);
        return;
    }
}

/* `text` into out[0, size), cut to fit and always terminated (size > 0). */
static inline void native_copy_text(const char *text, char *out, size_t size) {
    if (!size) return;
    size_t length = strlen(text);
    if (length >= size) length = size - 1;
    memcpy(out, text, length);
    out[length] = '\0';
}

/* snprintf(out, size, g ? "%.*g" : "%.*e", precision, x) with '.' for the decimal point whatever the locale. */
static inline void native_format(double x, int precision, int g, char *out, size_t size) {
    char text[64];
    snprintf(text, sizeof text, g ? "%.*g" : "%.*e", precision, x);
    native_c_decimal_point(text);
    native_copy_text(text, out, size);
}

static inline void native_format_e(double x, int precision, char *out, size_t size) {
    native_format(x, precision, 0, out, size);
}

/* (for messages) */
static inline void native_format_g(double x, int precision, char *out, size_t size) {
    native_format(x, precision, 1, out, size);
}

/* Python's float x % y for y != 0: fmod with the sign of y (a zero result too) */
static inline double native_py_mod(double x, double y) {
    double mod = fmod(x, y);
    if (mod) {
        if ((y < 0) != (mod < 0)) mod += y;
    } else {
        mod = copysign(0.0, y);
    }
    return mod;
}

/* `value` as an FMI Integer (a C int) in [min, max]: 0 and *out, or -1 if it is not an integer there (NaN, a
 * fraction, beyond the int range; never converted then, which would be undefined). */
static inline int native_integer_value(double value, double min, double max, int *out) {
    if (!(value >= min && value <= max && value >= (double)INT_MIN && value <= (double)INT_MAX)
        || value != floor(value))
        return -1;
    *out = (int)value;
    return 0;
}

#endif
