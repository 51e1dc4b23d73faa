/* Text in and out, the same in every locale and on every thread: numbers written as Python writes them (repr) and as
 * an engineer writes them (number_text.py), Python's repr of a text, decimal numbers read strictly, and a strict JSON
 * object (RFC 8259). Knows no instance and no FMI version: the laws, the runtime and the glue layers all use it. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numbers.h"
#include "text.h"

/* --- Python's words ---------------------------------------------------------------------------- */

void native_repr(double x, char *out, size_t size) {
    if (isnan(x)) { snprintf(out, size, "nan"); return; }
    if (isinf(x)) { snprintf(out, size, x > 0 ? "inf" : "-inf"); return; }
    char text[40];
    int precision = 1;
    for (; precision < 17; ++precision) { /* written and read with '.', whatever the locale */
        double back = 0.0;
        native_format_e(x, precision - 1, text, sizeof text);
        if (native_parse_decimal(text, strlen(text), &back) && back == x) break;
    }
    native_format_e(x, precision - 1, text, sizeof text);
    char digits[24];
    size_t count = 0;
    const char *p = text + (text[0] == '-');
    for (; *p && *p != 'e'; ++p) /* the digits */
        if (*p >= '0' && *p <= '9' && count < sizeof digits - 1) digits[count++] = *p;
    while (count > 1 && digits[count - 1] == '0') --count;
    digits[count] = '\0';
    int point = (x == 0.0 ? 0 : atoi(p + 1)) + 1; /* the value is 0.<digits> * 10^point */
    const char *sign = signbit(x) ? "-" : "";
    if (point > -4 && point <= 16) {
        if (point <= 0)
            snprintf(out, size, "%s0.%.*s%s", sign, -point, "0000", digits);
        else if ((size_t)point >= count)
            snprintf(out, size, "%s%s%.*s.0", sign, digits, (int)(point - (int)count), "0000000000000000");
        else
            snprintf(out, size, "%s%.*s.%s", sign, point, digits, digits + point);
    } else if (count == 1) {
        snprintf(out, size, "%s%se%+03d", sign, digits, point - 1);
    } else {
        snprintf(out, size, "%s%c.%se%+03d", sign, digits[0], digits + 1, point - 1);
    }
}

void native_number(double x, char *out, size_t size) {
    char text[40];
    native_repr(x, text, sizeof text);
    size_t length = strlen(text);
    if (!isfinite(x)) { snprintf(out, size, "%s", text); return; }
    if (length > 2 && !strcmp(text + length - 2, ".0")) text[length -= 2] = '\0'; /* 1, not 1.0 */
    int significant = 0, leading = 1;
    for (const char *c = text; *c && *c != 'e'; ++c) {
        if (!native_is_digit(*c) || (leading && *c == '0')) continue;
        leading = 0, ++significant;
    }
    if (significant <= NATIVE_NUMBER_DIGITS) snprintf(out, size, "%s", text);
    else native_format_g(x, NATIVE_NUMBER_DIGITS, out, size);
}

void native_measured(double x, char *out, size_t size) { native_format_g(x, 6, out, size); }

void native_number_sequence(const double *values, size_t count, int list, char *out, size_t size) {
    size_t used = (size_t)snprintf(out, size, "%s", list ? "[" : "(");
    for (size_t i = 0; i < count && used < size; ++i) {
        char text[40];
        native_number(values[i], text, sizeof text);
        used += (size_t)snprintf(out + used, size - used, "%s%s", i ? ", " : "", text);
    }
    if (used < size) snprintf(out + used, size - used, "%s", list ? "]" : count == 1 ? ",)" : ")");
}

void native_repr_text(const char *text, char *out, size_t size) {
    char quote = strchr(text, '\'') && !strchr(text, '"') ? '"' : '\'';
    size_t used = 0;
    if (size < 8) {
        if (size) out[0] = '\0';
        return;
    }
    out[used++] = quote;
    for (const unsigned char *c = (const unsigned char *)text; *c && used + 6 < size; ++c) {
        if (*c == '\\' || *c == (unsigned char)quote) used += (size_t)snprintf(out + used, size - used, "\\%c", *c);
        else if (*c == '\n') used += (size_t)snprintf(out + used, size - used, "\\n");
        else if (*c == '\r') used += (size_t)snprintf(out + used, size - used, "\\r");
        else if (*c == '\t') used += (size_t)snprintf(out + used, size - used, "\\t");
        else if (*c < 0x20 || *c == 0x7f) used += (size_t)snprintf(out + used, size - used, "\\x%02x", *c);
        else out[used++] = (char)*c;
    }
    out[used++] = quote;
    out[used] = '\0';
}

/* --- numbers whatever the locale ------------------------------------------------------------------------------- */

int native_read_decimal(const char *text, size_t length, double *value) {
    size_t i = 0, digits = 0;
    if (i < length && (text[i] == '+' || text[i] == '-')) ++i;
    for (; i < length && text[i] >= '0' && text[i] <= '9'; ++i) ++digits;
    if (i < length && text[i] == '.')
        for (++i; i < length && text[i] >= '0' && text[i] <= '9'; ++i) ++digits;
    if (!digits) return -1;
    if (i < length && (text[i] == 'e' || text[i] == 'E')) {
        size_t exponent = 0;
        if (++i < length && (text[i] == '+' || text[i] == '-')) ++i;
        for (; i < length && text[i] >= '0' && text[i] <= '9'; ++i) ++exponent;
        if (!exponent) return -1;
    }
    if (i != length) return -1;
    /* the syntax is checked: read with components/native/numbers.h (no locale, no copy, correctly rounded) */
    return native_parse_decimal(text, length, value) == length ? 0 : -1;
}

/* --- strict JSON (RFC 8259): one object whose values are numbers, true, false or strings; every byte checked (valid
 * UTF-8, no control character in a string, \u escapes with their surrogate pairs), no trailing data, no name twice */
typedef struct {
    const char *p, *end;
} Json;

static void json_space(Json *j) {
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r')) ++j->p;
}

/* The length of the UTF-8 sequence at p (1 to 4 bytes, before end) as Python's strict decoder takes it, or 0. */
static size_t utf8_sequence(const unsigned char *p, const unsigned char *end) {
    size_t n = p[0] < 0x80 ? 1 : p[0] >= 0xc2 && p[0] <= 0xdf ? 2 : p[0] >= 0xe0 && p[0] <= 0xef ? 3
             : p[0] >= 0xf0 && p[0] <= 0xf4 ? 4 : 0;
    if (!n || (size_t)(end - p) < n) return 0;
    for (size_t i = 1; i < n; ++i)
        if ((p[i] & 0xc0) != 0x80) return 0;
    if ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] >= 0xa0) || (p[0] == 0xf0 && p[1] < 0x90)
        || (p[0] == 0xf4 && p[1] >= 0x90))
        return 0; /* overlong, a surrogate, beyond U+10FFFF */
    return n;
}

static int json_hex(const char *p, unsigned *code) {
    *code = 0;
    for (int i = 0; i < 4; ++i) {
        char c = p[i];
        unsigned digit = c >= '0' && c <= '9' ? (unsigned)(c - '0') : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
                       : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10) : 16;
        if (digit == 16) return -1;
        *code = *code << 4 | digit;
    }
    return 0;
}

/* A JSON string at j->p into *out (malloc'd, *length bytes and a NUL): NULL, or why not. */
static const char *json_string(Json *j, char **out, size_t *length) {
    *out = NULL;
    if (j->p >= j->end || *j->p != '"') return "a name or string expected";
    const char *start = ++j->p, *q = start;
    while (q < j->end && *q != '"') q += *q == '\\' && q + 1 < j->end ? 2 : 1;
    if (q >= j->end) return "a string without its closing quote";
    char *text = malloc((size_t)(q - start) + 1); /* a decoded string is never longer than its source */
    if (!text) return "out of memory";
    size_t k = 0;
    const char *why = NULL;
    for (const char *p = start; !why && p < q;) {
        unsigned char c = (unsigned char)*p;
        if (c < 0x20) {
            why = "a control character in a string (it must be escaped)";
        } else if (c != '\\') {
            size_t n = utf8_sequence((const unsigned char *)p, (const unsigned char *)q);
            if (!n) why = "a string that is not valid UTF-8";
            else memcpy(text + k, p, n), k += n, p += n;
        } else if (p[1] != 'u') {
            const char *escapes = "\"\\/bfnrt", *found = memchr(escapes, p[1], 8);
            if (!found) why = "an invalid escape in a string";
            else text[k++] = "\"\\/\b\f\n\r\t"[found - escapes], p += 2;
        } else {
            unsigned code, low;
            if (q - p < 6 || json_hex(p + 2, &code) != 0) { why = "an invalid \\u escape in a string"; break; }
            p += 6;
            if (code >= 0xdc00 && code <= 0xdfff) { why = "a lone surrogate (\\u escape) in a string"; break; }
            if (code >= 0xd800 && code <= 0xdbff) {
                if (q - p < 6 || p[0] != '\\' || p[1] != 'u' || json_hex(p + 2, &low) != 0 || low < 0xdc00
                    || low > 0xdfff) { why = "a lone surrogate (\\u escape) in a string"; break; }
                code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
                p += 6;
            }
            if (code < 0x80) {
                text[k++] = (char)code;
            } else if (code < 0x800) {
                text[k++] = (char)(0xc0 | code >> 6), text[k++] = (char)(0x80 | (code & 0x3f));
            } else if (code < 0x10000) {
                text[k++] = (char)(0xe0 | code >> 12), text[k++] = (char)(0x80 | ((code >> 6) & 0x3f));
                text[k++] = (char)(0x80 | (code & 0x3f));
            } else {
                text[k++] = (char)(0xf0 | code >> 18), text[k++] = (char)(0x80 | ((code >> 12) & 0x3f));
                text[k++] = (char)(0x80 | ((code >> 6) & 0x3f)), text[k++] = (char)(0x80 | (code & 0x3f));
            }
        }
    }
    if (why) {
        free(text);
        return why;
    }
    text[k] = '\0';
    j->p = q + 1;
    *out = text, *length = k;
    return NULL;
}

/* A JSON value that is a number, true, false or a string into *m: NULL, or why not. */
static const char *json_value(Json *j, JsonMember *m) {
    if (j->p >= j->end) return "a value expected";
    if (*j->p == '"') {
        m->kind = JSON_STRING;
        return json_string(j, &m->text, &m->text_length);
    }
    static const char *const words[] = {"true", "false", "null"};
    for (int w = 0; w < 3; ++w) {
        size_t n = strlen(words[w]);
        if ((size_t)(j->end - j->p) >= n && !memcmp(j->p, words[w], n)) {
            if (w == 2) return "null is not a parameter value";
            m->kind = w ? JSON_FALSE : JSON_TRUE, m->number = w ? 0.0 : 1.0;
            j->p += n;
            return NULL;
        }
    }
    if (*j->p == '[' || *j->p == '{') return "an array or object is not a parameter value";
    const char *start = j->p;
    if (j->p < j->end && *j->p == '-') ++j->p;
    if (j->p < j->end && *j->p == '0') ++j->p;
    else if (j->p < j->end && *j->p >= '1' && *j->p <= '9')
        while (j->p < j->end && *j->p >= '0' && *j->p <= '9') ++j->p;
    else return "not a JSON value";
    m->kind = JSON_INTEGER;
    if (j->p < j->end && *j->p == '.') {
        m->kind = JSON_NUMBER;
        if (++j->p >= j->end || *j->p < '0' || *j->p > '9') return "a number without digits after its point";
        while (j->p < j->end && *j->p >= '0' && *j->p <= '9') ++j->p;
    }
    if (j->p < j->end && (*j->p == 'e' || *j->p == 'E')) {
        m->kind = JSON_NUMBER;
        if (++j->p < j->end && (*j->p == '+' || *j->p == '-')) ++j->p;
        if (j->p >= j->end || *j->p < '0' || *j->p > '9') return "a number without digits in its exponent";
        while (j->p < j->end && *j->p >= '0' && *j->p <= '9') ++j->p;
    }
    if (native_read_decimal(start, (size_t)(j->p - start), &m->number) != 0) return "not a JSON number";
    return NULL;
}

void native_json_free(JsonMember *members, size_t count) {
    for (size_t i = 0; members && i < count; ++i) free(members[i].name), free(members[i].text);
    free(members);
}

/* The members of the JSON object in `size` bytes (in their order) into *out and *count: 0, or -1 with `why` set. */
int native_json_object(const char *bytes, size_t size, JsonMember **out, size_t *count, char *why, size_t why_size) {
    Json j = {bytes, bytes + size};
    JsonMember *members = NULL;
    size_t used = 0, capacity = 0;
    const char *problem = NULL;
    json_space(&j);
    if (j.p >= j.end || *j.p != '{') problem = "not a JSON object";
    else ++j.p, json_space(&j);
    int closed = 0;
    while (!problem && !closed) {
        if (j.p < j.end && *j.p == '}' && used == 0) { ++j.p, closed = 1; break; }
        if (used == capacity) {
            size_t grown = capacity ? 2 * capacity : 16;
            JsonMember *more = grown < SIZE_MAX / sizeof *more ? realloc(members, grown * sizeof *more) : NULL;
            if (!more) { problem = "out of memory"; break; }
            members = more, capacity = grown;
        }
        JsonMember *m = &members[used];
        memset(m, 0, sizeof *m);
        ++used;
        if ((problem = json_string(&j, &m->name, &m->name_length))) break;
        for (size_t i = 0; i + 1 < used; ++i)
            if (members[i].name_length == m->name_length && !memcmp(members[i].name, m->name, m->name_length)) {
                char repr[600];
                native_repr_text(m->name, repr, sizeof repr);
                snprintf(why, why_size, "the name %s appears more than once", repr);
                native_json_free(members, used);
                return -1;
            }
        json_space(&j);
        if (j.p >= j.end || *j.p != ':') { problem = "':' expected after a name"; break; }
        ++j.p, json_space(&j);
        if ((problem = json_value(&j, m))) break;
        json_space(&j);
        if (j.p < j.end && *j.p == ',') ++j.p, json_space(&j);
        else if (j.p < j.end && *j.p == '}') ++j.p, closed = 1;
        else problem = j.p < j.end ? "',' or '}' expected after a value" : "the object is not closed";
    }
    if (!problem) {
        json_space(&j);
        if (j.p != j.end) problem = "data after the object";
    }
    if (problem) {
        snprintf(why, why_size, "not a JSON object of parameter values: %s (at byte %zu)", problem,
                 (size_t)(j.p - bytes));
        native_json_free(members, used);
        return -1;
    }
    *out = members, *count = used;
    return 0;
}
