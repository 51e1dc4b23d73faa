/* A result row's values as Python writes them (repr): the shortest digits that read back to the same double (Ryu,
 * Ulf Adams, PLDI 2018: ryu/, Apache 2.0 or Boost 1.0), laid out as CPython's float repr does
 * (Python/pystrtod.c, format_float_short with the 'r' code): fixed notation for a decimal exponent from -4 to 15,
 * else d.ddde+XX; an integer with ".0"; "nan", "inf", "-inf", "-0.0". So a CSV row is the same bytes as
 * ",".join(repr(v) for v in row), at a tenth of the cost. */
#include "ryu/d2s.c"

#include <stdint.h>
#include <string.h>

#if defined(_WIN32)
#define EXPORT __declspec(dllexport)
#else
#define EXPORT __attribute__((visibility("default")))
#endif

/* the longest text of one value: "-1.2345678901234567e-308" is 24, "-0.00012345678901234567" 23 */
#define MAX_TEXT 25

static int repr_double(double value, char *out)
{
    const uint64_t bits = double_to_bits(value);
    const int negative = (int)(bits >> 63);
    const uint64_t mantissa = bits & ((1ull << DOUBLE_MANTISSA_BITS) - 1);
    const uint32_t exponent = (uint32_t)((bits >> DOUBLE_MANTISSA_BITS) & ((1u << DOUBLE_EXPONENT_BITS) - 1));
    char *p = out;
    if (exponent == (1u << DOUBLE_EXPONENT_BITS) - 1u) {
        if (mantissa != 0) {
            memcpy(p, "nan", 3);
            return 3;
        }
        if (negative)
            *p++ = '-';
        memcpy(p, "inf", 3);
        return (int)(p - out) + 3;
    }
    if (negative)
        *p++ = '-';
    if (exponent == 0 && mantissa == 0) {
        memcpy(p, "0.0", 3);
        return (int)(p - out) + 3;
    }
    floating_decimal_64 v;
    if (d2d_small_int(mantissa, exponent, &v)) {
        for (;;) { /* an integer's trailing decimal zeros go into the exponent, as d2s_buffered_n does */
            const uint64_t q = div10(v.mantissa);
            if ((uint32_t)v.mantissa - 10 * (uint32_t)q != 0)
                break;
            v.mantissa = q;
            ++v.exponent;
        }
    } else {
        v = d2d(mantissa, exponent);
    }
    char digits[20];
    const int n = (int)decimalLength17(v.mantissa);
    uint64_t rest = v.mantissa;
    for (int i = n - 1; i >= 0; i--) {
        digits[i] = (char)('0' + rest % 10);
        rest /= 10;
    }
    const int point = v.exponent + n; /* the value is 0.digits x 10^point */
    if (point <= -4 || point > 16) {
        *p++ = digits[0];
        if (n > 1) {
            *p++ = '.';
            memcpy(p, digits + 1, (size_t)(n - 1));
            p += n - 1;
        }
        int e = point - 1;
        *p++ = 'e';
        *p++ = e < 0 ? '-' : '+';
        e = e < 0 ? -e : e;
        if (e >= 100) {
            *p++ = (char)('0' + e / 100);
            e %= 100;
        }
        *p++ = (char)('0' + e / 10);
        *p++ = (char)('0' + e % 10);
    } else if (point <= 0) {
        *p++ = '0';
        *p++ = '.';
        for (int i = 0; i < -point; i++)
            *p++ = '0';
        memcpy(p, digits, (size_t)n);
        p += n;
    } else if (point >= n) {
        memcpy(p, digits, (size_t)n);
        p += n;
        for (int i = 0; i < point - n; i++)
            *p++ = '0';
        memcpy(p, ".0", 2);
        p += 2;
    } else {
        memcpy(p, digits, (size_t)point);
        p += point;
        *p++ = '.';
        memcpy(p, digits + point, (size_t)(n - point));
        p += n - point;
    }
    return (int)(p - out);
}

/* rows x columns values (row-major) as CSV lines into out (room bytes): the bytes written, or -1 where they would
 * not fit (nothing is written past room) or an argument is out of range */
EXPORT int64_t csv_rows(const double *values, int64_t rows, int64_t columns, char *out, int64_t room)
{
    if (values == NULL || out == NULL || rows < 0 || columns < 1 || room < 0)
        return -1;
    int64_t written = 0;
    for (int64_t r = 0; r < rows; r++) {
        for (int64_t c = 0; c < columns; c++) {
            if (room - written < MAX_TEXT + 1)
                return -1;
            written += repr_double(values[r * columns + c], out + written);
            out[written++] = c + 1 < columns ? ',' : '\n';
        }
    }
    return written;
}
