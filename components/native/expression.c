/* User-function expressions (expression.h): a tokenizer and recursive-descent parser for the user-function grammar
 * (docs/components.md: Python's expression grammar of the stripped text, restricted to what expressions.py allows,
 * and enough of the rest to name what is not allowed), the same checks in the same order (a breadth-first walk like
 * Python's ast.walk), and an evaluator with Python's float semantics.
 * Bounded: the text is at most EXPRESSION_MAX_LENGTH characters; brackets nest at most EXPRESSION_MAX_BRACKETS deep
 * (Python's tokenizer limit); the parser recurses once per bracket or if-else level only (chains of unary
 * operators, `not`, `**`, `and`/`or` and comparisons are loops over heap stacks), and the evaluator once per level
 * of the syntax tree, whose depth the node limit bounds (each level is at least two nodes): every frame is small. */
#include "expression.h"
#include "numbers.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum Kind {
    K_NUMBER, K_NAME, K_UNARY, K_BINARY, K_BOOL, K_COMPARE, K_IF, K_CALL,
    K_FORBIDDEN, /* a construct expressions.py refuses (text: its ast node name) */
    K_LITERAL,   /* a literal that is not a real number (text: its repr) */
    K_HOLDER     /* an operation with a refused operator: its children in Python's field order (never evaluated) */
};
enum Op { O_ADD, O_SUB, O_MUL, O_DIV, O_FLOORDIV, O_MOD, O_POW, O_NEG, O_POS, O_NOT, O_AND, O_OR,
          O_EQ, O_NE, O_LT, O_LE, O_GT, O_GE, O_INVERT, O_MARK };

typedef struct {
    int kind, op;
    int first, count; /* children: Expression.children[first .. first+count) */
    double number;
    int argument;     /* K_NAME: the argument's index, or -1 - constant index (pi, e), or -100 - function */
    int called;       /* K_NAME: the function position of a call */
    char text[128];   /* K_NAME: the name (in ASCII, abbreviated as names are in messages); K_FORBIDDEN, K_LITERAL */
    char source[64];  /* an Attribute of a name: its dotted name (os.system), shown as names are */
    int keywords;     /* K_CALL: keyword arguments given */
} Node;

struct Expression {
    Node *nodes;
    int *children;
    int node_count, child_count, root;
    size_t argument_count;
    char **names;
};

static const char *const FUNCTIONS[] = {"abs", "acos", "asin", "atan", "atan2", "ceil", "copysign", "cos", "cosh",
                                        "exp", "floor", "fmod", "hypot", "log", "log10", "max", "min", "sign", "sin",
                                        "sinh", "sqrt", "tan", "tanh"};
#define FUNCTION_COUNT (sizeof FUNCTIONS / sizeof *FUNCTIONS)
static const double CONSTANTS[] = {3.141592653589793, 2.718281828459045};

static int function_index(const char *name) {
    for (size_t i = 0; i < FUNCTION_COUNT; ++i)
        if (!strcmp(FUNCTIONS[i], name)) return (int)i;
    return -1;
}

/* --- characters: UTF-8, Python's whitespace (str.strip), fullwidth names (NFKC) ------------------------------ */

/* the code point at `text`: its length in bytes (1..4), or 0 where the bytes are not UTF-8 */
static int utf8(const char *text, unsigned *cp) {
    const unsigned char *s = (const unsigned char *)text;
    static const unsigned least[] = {0, 0, 0x80, 0x800, 0x10000};
    int n = s[0] < 0x80 ? 1 : s[0] >= 0xF0 ? 4 : s[0] >= 0xE0 ? 3 : s[0] >= 0xC0 ? 2 : 0;
    if (!n || s[0] > 0xF4) return 0;
    unsigned v = n == 1 ? s[0] : s[0] & (0x3Fu >> (n - 1));
    for (int k = 1; k < n; ++k) {
        if ((s[k] & 0xC0) != 0x80) return 0; /* a NUL ends the text here, before any byte beyond it */
        v = v << 6 | (s[k] & 0x3Fu);
    }
    if (v < least[n] || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return 0;
    *cp = v;
    return n;
}

/* Python's str.isspace: what str.strip removes */
static int is_space(unsigned c) {
    return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 || c == 0x1680
           || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

/* the ASCII letter, digit or underscore a fullwidth one reads as (NFKC), or 0 */
static char fullwidth(unsigned c) {
    if (c >= 0xFF10 && c <= 0xFF19) return (char)('0' + (c - 0xFF10));
    if (c >= 0xFF21 && c <= 0xFF3A) return (char)('A' + (c - 0xFF21));
    if (c >= 0xFF41 && c <= 0xFF5A) return (char)('a' + (c - 0xFF41));
    return c == 0xFF3F ? '_' : 0;
}

/* the characters (code points) of the first `bytes` bytes of a UTF-8 text */
static size_t characters(const char *text, size_t bytes) {
    size_t count = 0;
    for (size_t i = 0; i < bytes && text[i]; ++i) count += ((unsigned char)text[i] & 0xC0) != 0x80;
    return count;
}

/* --- tokens ------------------------------------------------------------------------------------------ */

enum Token { T_END, T_NUMBER, T_NAME, T_STRING, T_OP, T_BAD };

typedef struct {
    const char *text;        /* the stripped expression */
    size_t position, length; /* the current token */
    int token, wide;         /* wide: a name written with fullwidth characters (a name, never a keyword) */
    char value[EXPRESSION_MAX_LENGTH + 1]; /* the token's text (cut at 127 bytes but for a name, in ASCII) */
    const char *error;       /* a syntax error */
    size_t error_column;
    int level, depth;        /* open brackets; expression() calls in progress */
    Expression *e;
    int capacity, child_capacity;
    int *pending;            /* children collected for the nodes being built (a stack) */
    int pending_count, pending_capacity;
    int *ops;                /* operators waiting for their operand (unary chains, comparisons, **) */
    int op_count, op_capacity;
} Parser;

static int is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static int is_digit(char c) { return c >= '0' && c <= '9'; }
/* Python's is_potential_identifier_char */
static int is_name_char(char c) { return is_name_start(c) || is_digit(c) || (unsigned char)c >= 0x80; }

static int fail_at(Parser *p, size_t position, const char *message) {
    if (!p->error) {
        p->error = message;
        p->error_column = characters(p->text, position) + 1;
    }
    return -1;
}

static int fail(Parser *p, const char *message) { return fail_at(p, p->position, message); }

static int digits_tail(const char *s, size_t *i) { /* Python's tok_decimal_tail: 0, or -1 */
    for (;;) {
        while (is_digit(s[*i])) ++*i;
        if (s[*i] != '_') return 0;
        ++*i;
        if (!is_digit(s[*i])) return -1;
    }
}

/* Python's verify_end_of_number: a number followed by a name character is an error, but for the keywords that may
 * follow a number in valid code (the number ends before them) */
static const char *number_end(const char *s, size_t i, const char *problem) {
    const char *r = s + i;
    int keyword = (r[0] == 'a' && !strncmp(r + 1, "nd", 2)) || (r[0] == 'e' && !strncmp(r + 1, "lse", 3))
                  || (r[0] == 'f' && !strncmp(r + 1, "or", 2)) || (r[0] == 'o' && r[1] == 'r')
                  || (r[0] == 'i' && (r[1] == 'f' || r[1] == 'n' || r[1] == 's'))
                  || (r[0] == 'n' && !strncmp(r + 1, "ot", 2));
    return !keyword && is_name_char(r[0]) ? problem : NULL;
}

static int base_digit(int base, char c) {
    return base == 16 ? is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
                      : c >= '0' && c < '0' + base;
}

/* a number token from s[*at] (Python's tokenizer): NULL, or the syntax error; *at: its end */
static const char *scan_number(const char *s, size_t *at) {
    size_t i = *at;
    const char *problem = NULL;
    if (s[i] == '0' && s[i + 1] && strchr("xXoObB", s[i + 1])) {
        char letter = (char)(s[i + 1] | 0x20);
        int base = letter == 'x' ? 16 : letter == 'o' ? 8 : 2;
        const char *invalid = base == 16 ? "invalid hexadecimal literal" : base == 8 ? "invalid octal literal"
                                                                                   : "invalid binary literal";
        i += 2;
        do {
            if (s[i] == '_') ++i;
            if (!base_digit(base, s[i])) {
                *at = i;
                return invalid;
            }
            while (base_digit(base, s[i])) ++i;
        } while (s[i] == '_');
        if (base != 16 && is_digit(s[i])) problem = invalid;
        else problem = number_end(s, i, invalid);
        *at = i;
        return problem;
    }
    const char *decimal = "invalid decimal literal";
    if (s[i] == '0') {
        int nonzero = 0;
        ++i;
        for (;;) {
            if (s[i] == '_') {
                ++i;
                if (!is_digit(s[i])) { *at = i; return decimal; }
            }
            if (s[i] != '0') break;
            ++i;
        }
        if (is_digit(s[i])) {
            nonzero = 1;
            if (digits_tail(s, &i) != 0) { *at = i; return decimal; }
        }
        if (s[i] != '.' && s[i] != 'e' && s[i] != 'E' && s[i] != 'j' && s[i] != 'J') {
            *at = i;
            return nonzero ? "leading zeros in decimal integer literals are not permitted" : number_end(s, i, decimal);
        }
    } else if (s[i] != '.' && digits_tail(s, &i) != 0) {
        *at = i;
        return decimal;
    }
    if (s[i] == '.') {
        ++i;
        if (is_digit(s[i]) && digits_tail(s, &i) != 0) { *at = i; return decimal; }
    }
    if (s[i] == 'e' || s[i] == 'E') {
        size_t e = i++;
        if (s[i] == '+' || s[i] == '-') {
            ++i;
            if (!is_digit(s[i])) { *at = i; return decimal; }
        } else if (!is_digit(s[i])) {
            *at = e; /* "1else": the number ends before the keyword */
            return strncmp(s + e, "else", 4) ? decimal : NULL;
        }
        if (digits_tail(s, &i) != 0) { *at = i; return decimal; }
    }
    if (s[i] == 'j' || s[i] == 'J') problem = number_end(s, ++i, "invalid imaginary literal");
    else problem = number_end(s, i, decimal);
    *at = i;
    return problem;
}

static int open_bracket(Parser *p) {
    if (p->level >= EXPRESSION_MAX_BRACKETS) return fail(p, "too many nested parentheses (at most 200)");
    ++p->level;
    return 0;
}

static void next(Parser *p) {
    const char *s = p->text;
    size_t i = p->position + p->length;
    if (p->error) { /* after an error, no more tokens */
        p->token = T_END, p->length = 0, p->value[0] = '\0';
        return;
    }
    while (s[i] == ' ' || s[i] == '\t' || s[i] == '\f') ++i;
    if (s[i] == '#') i += strlen(s + i); /* a comment, to the end (an expression is one line) */
    p->position = i;
    p->wide = 0;
    size_t start = i, used = 0;
    unsigned cp = 0;
    int n = (unsigned char)s[i] >= 0x80 ? utf8(s + i, &cp) : 0;
    char wide = n ? fullwidth(cp) : 0;
    if (!s[i]) {
        p->token = T_END;
    } else if (is_digit(s[i]) || (s[i] == '.' && is_digit(s[i + 1]))) {
        p->token = T_NUMBER;
        const char *problem = scan_number(s, &i);
        if (problem) {
            fail_at(p, i, problem);
            p->token = T_BAD;
        }
    } else if (is_name_start(s[i]) || (wide && !is_digit(wide))) {
        p->token = T_NAME;
        for (;;) { /* the name, fullwidth characters read as ASCII */
            n = (unsigned char)s[i] >= 0x80 ? utf8(s + i, &cp) : 0;
            wide = n ? fullwidth(cp) : 0;
            char c = wide ? wide : s[i];
            if (!(is_name_start(s[i]) || is_digit(s[i]) || wide)) break;
            if (used < sizeof p->value - 1) p->value[used++] = c;
            p->wide |= wide != 0;
            i += wide ? (size_t)n : 1;
        }
        p->value[used] = '\0';
        static const char *const prefixes[] = {"b", "r", "u", "f", "br", "rb", "fr", "rf"};
        if ((s[i] == '\'' || s[i] == '"') && !p->wide && i - start <= 2) { /* a prefixed string: b'', r'', f'' */
            char prefix[3] = {(char)(s[start] | 0x20), i - start == 2 ? (char)(s[start + 1] | 0x20) : '\0', '\0'};
            for (size_t k = 0; k < sizeof prefixes / sizeof *prefixes; ++k)
                if (!strcmp(prefix, prefixes[k])) p->token = T_STRING;
        }
    } else if (s[i] == '\'' || s[i] == '"') {
        p->token = T_STRING;
    } else if ((unsigned char)s[i] >= 0x80 || (unsigned char)s[i] < 0x20 || s[i] == '$' || s[i] == '?'
               || s[i] == '`') {
        p->token = T_BAD;
        fail(p, n ? "invalid character" : "invalid non-printable character or byte");
    } else {
        static const char *const ops[] = {"**", "//", "<=", ">=", "==", "!=", "<<", ">>", ":=", "->", "...", "+", "-",
                                          "*", "/", "%", "<", ">", "(", ")", ",", "[", "]", "{", "}", ".", ":", "|",
                                          "&", "^", "~", "@", "=", ";", "!"};
        p->token = T_BAD;
        for (size_t k = 0; k < sizeof ops / sizeof *ops; ++k)
            if (!strncmp(s + i, ops[k], strlen(ops[k]))) {
                p->token = T_OP;
                i += strlen(ops[k]);
                break;
            }
        if (p->token == T_BAD) fail(p, "invalid syntax");
        else if (s[start] == '(' || s[start] == '[' || s[start] == '{') open_bracket(p);
        else if ((s[start] == ')' || s[start] == ']' || s[start] == '}') && p->level > 0) --p->level;
    }
    if (p->token == T_STRING) { /* to the closing quote or triple quote (a backslash is refused before parsing) */
        while (s[i] != '\'' && s[i] != '"') ++i;
        char quote = s[i];
        int triple = s[i + 1] == quote && s[i + 2] == quote;
        i += triple ? 3 : 1;
        while (s[i] && !(s[i] == quote && (!triple || (s[i + 1] == quote && s[i + 2] == quote)))) ++i;
        if (!s[i]) {
            fail_at(p, start, "unterminated string literal");
            p->token = T_BAD;
        } else {
            i += triple ? 3 : 1;
        }
    }
    if (p->error) p->token = T_END;
    p->length = i - start;
    if (p->token != T_NAME)
        snprintf(p->value, 128, "%.*s", (int)(p->length < 127 ? p->length : 127), s + start);
}

static int is_op(const Parser *p, const char *op) { return p->token == T_OP && !strcmp(p->value, op); }
static int is_word(const Parser *p, const char *word) {
    return p->token == T_NAME && !p->wide && !strcmp(p->value, word);
}

/* --- nodes ------------------------------------------------------------------------------------------- */

static int grow(Parser *p, int **array, int *capacity, int needed) {
    if (needed <= *capacity) return 0;
    int wanted = 2 * needed + 64;
    int *grown = realloc(*array, (size_t)wanted * sizeof *grown);
    if (!grown) return fail(p, "out of memory");
    *array = grown;
    *capacity = wanted;
    return 0;
}

static int node(Parser *p, int kind, int op, int first_pending) {
    Expression *e = p->e;
    if (p->error) return -1;
    if (e->node_count == p->capacity) {
        int wanted = p->capacity ? 2 * p->capacity : 64;
        Node *grown = realloc(e->nodes, (size_t)wanted * sizeof *grown);
        if (!grown) return fail(p, "out of memory");
        e->nodes = grown;
        p->capacity = wanted;
    }
    int count = p->pending_count - first_pending;
    if (grow(p, &e->children, &p->child_capacity, e->child_count + count) != 0) return -1;
    Node *n = &e->nodes[e->node_count];
    memset(n, 0, sizeof *n);
    n->kind = kind, n->op = op, n->first = e->child_count, n->count = count;
    if (count) memcpy(e->children + e->child_count, p->pending + first_pending, (size_t)count * sizeof(int));
    e->child_count += count;
    p->pending_count = first_pending;
    return e->node_count++;
}

static int push(Parser *p, int index) {
    if (index < 0) return -1;
    if (grow(p, &p->pending, &p->pending_capacity, p->pending_count + 1) != 0) return -1;
    p->pending[p->pending_count++] = index;
    return index;
}

static int push_op(Parser *p, int op) {
    if (grow(p, &p->ops, &p->op_capacity, p->op_count + 1) != 0) return -1;
    p->ops[p->op_count++] = op;
    return 0;
}

static int leaf(Parser *p, int kind, const char *text) {
    int index = node(p, kind, 0, p->pending_count);
    if (index >= 0) snprintf(p->e->nodes[index].text, sizeof p->e->nodes[index].text, "%.127s", text);
    return index;
}

static int expression(Parser *p);

static int or_test(Parser *p);
static int arithmetic(Parser *p);

/* comprehension clauses: (for targets in or_test (if or_test)*)+ */
static int comprehension(Parser *p) {
    while (is_word(p, "for") || is_word(p, "async")) {
        if (is_word(p, "async")) next(p);
        if (!is_word(p, "for")) return fail(p, "invalid syntax");
        next(p);
        do {
            if (is_op(p, ",")) next(p);
            if (is_op(p, "*")) next(p);
            if (arithmetic(p) < 0) return -1;
        } while (is_op(p, ","));
        if (!is_word(p, "in")) return fail(p, "invalid syntax");
        next(p);
        if (or_test(p) < 0) return -1;
        while (is_word(p, "if")) {
            next(p);
            if (or_test(p) < 0) return -1;
        }
    }
    return 0;
}

/* The contents of a refused bracket group to `close` (the opening bracket read; `started`: its first item's
 * expression too), parsed so that its syntax errors are found, then dropped: 0, or -1. *dict: its first item is a
 * key: value (or **mapping), *items: the items. Slices and starred items are taken anywhere (a superset). */
static int group_contents(Parser *p, const char *close, int started, int *dict, int *items) {
    const char *never = close[0] == ')' ? "'(' was never closed" : close[0] == ']' ? "'[' was never closed"
                                                                                  : "'{' was never closed";
    *dict = 0;
    *items = 0;
    while (started || !is_op(p, close)) {
        if (p->token == T_END) return fail(p, never);
        if (!started) {
            int doubled = is_op(p, "**"), starred = doubled || is_op(p, "*");
            if (starred) next(p);
            if (doubled && *items == 0) *dict = 1;
            if (starred ? arithmetic(p) < 0 : !is_op(p, ":") && expression(p) < 0) return -1; /* *x: a bitwise_or */
        }
        started = 0;
        if (is_op(p, ":=")) {
            next(p);
            if (expression(p) < 0) return -1;
        }
        if (is_op(p, ":")) { /* a key's value, or a slice */
            if (*items == 0) *dict = 1;
            next(p);
            if (!is_op(p, ",") && !is_op(p, close) && !is_op(p, ":") && expression(p) < 0) return -1;
            if (is_op(p, ":")) {
                next(p);
                if (!is_op(p, ",") && !is_op(p, close) && expression(p) < 0) return -1;
            }
        }
        if (comprehension(p) != 0) return -1;
        ++*items;
        if (is_op(p, ",")) next(p);
        else if (!is_op(p, close)) return fail(p, p->token == T_END ? never : "invalid syntax");
    }
    next(p);
    return p->error ? -1 : 0;
}

/* an integer in base 2, 8 or 16 as the nearest double (ties to even, as Python's float(int)); 0, or -1 beyond the
 * largest double */
static int power_of_two_literal(const char *digits, size_t length, int base, double *value) {
    int shift = base == 16 ? 4 : base == 8 ? 3 : 1;
    uint64_t top = 0; /* the leading 64 bits */
    int bits = 0, sticky = 0;
    for (const char *c = digits; c < digits + length; ++c) {
        if (*c == '_') continue;
        unsigned d = (unsigned)(is_digit(*c) ? *c - '0' : (*c | 0x20) - 'a' + 10);
        for (int b = shift - 1; b >= 0; --b) {
            unsigned bit = (d >> b) & 1u;
            if (!bits && !bit) continue; /* leading zeros */
            if (bits < 64) top |= (uint64_t)bit << (63 - bits);
            else sticky |= (int)bit;
            if (bits < 100000) ++bits;
        }
    }
    if (!bits) {
        *value = 0.0;
        return 0;
    }
    if (bits <= 64) {
        *value = (double)(top >> (64 - bits)); /* exact below 2**53; rounds to nearest even above */
        return 0;
    }
    uint64_t mantissa = top >> 11, rest = top & 0x7FF;
    if (rest > 0x400 || (rest == 0x400 && (sticky || (mantissa & 1)))) ++mantissa;
    if (bits - 53 > 1100) return -1;
    *value = ldexp((double)mantissa, bits - 53);
    return isinf(*value) ? -1 : 0;
}

/* a decimal literal (digits, '.', exponent, underscores) as the nearest double: the digits and a scaled exponent,
 * so strtod reads no decimal point (no locale) */
static double decimal_literal(const char *text, size_t length) {
    char *clean = malloc(length + 32);
    if (!clean) return NAN;
    size_t k = 0, i = 0;
    long exponent = 0;
    int fraction = 0;
    for (; i < length && text[i] != 'e' && text[i] != 'E'; ++i) {
        if (text[i] == '.') fraction = 1;
        else if (text[i] != '_') clean[k++] = text[i], exponent -= fraction;
    }
    if (i < length) { /* the written exponent, saturated (beyond 10**±100000 the value is 0 or infinite anyway) */
        int negative = text[++i] == '-';
        long written = 0;
        for (i += text[i] == '+' || text[i] == '-'; i < length; ++i)
            if (text[i] != '_' && written < 100000) written = 10 * written + (text[i] - '0');
        exponent += negative ? -written : written;
    }
    if (!k) clean[k++] = '0';
    snprintf(clean + k, 32, "e%ld", exponent);
    double value = strtod(clean, NULL);
    free(clean);
    return value;
}

static int literal_number(Parser *p) {
    const char *s = p->text + p->position;
    size_t n = p->length;
    if (s[n - 1] == 'j' || s[n - 1] == 'J') { /* an imaginary literal: its repr, as Python writes it */
        char repr[48], text[56];
        native_repr(decimal_literal(s, n - 1), repr, sizeof repr);
        size_t r = strlen(repr);
        if (r > 2 && !strcmp(repr + r - 2, ".0")) repr[r - 2] = '\0';
        snprintf(text, sizeof text, "%sj", repr);
        return leaf(p, K_LITERAL, text);
    }
    double value;
    int base = n > 1 && s[0] == '0' ? ((s[1] | 0x20) == 'x' ? 16 : (s[1] | 0x20) == 'o' ? 8 : (s[1] | 0x20) == 'b' ? 2
                                                                                                            : 10)
                                    : 10;
    int integer = 1;
    for (size_t i = 0; i < n && base == 10; ++i) integer &= s[i] != '.' && s[i] != 'e' && s[i] != 'E';
    int overflow = base == 10 ? (value = decimal_literal(s, n), integer && isinf(value))
                              : power_of_two_literal(s + 2, n - 2, base, &value) != 0;
    if (overflow) { /* Python's float(int) raises OverflowError */
        int index = leaf(p, K_LITERAL, "");
        if (index >= 0) p->e->nodes[index].op = -1; /* the message is the text, not "literal ... is not" */
        return index;
    }
    int index = node(p, K_NUMBER, 0, p->pending_count);
    if (index >= 0) p->e->nodes[index].number = value;
    return index;
}

/* a text as messages show a literal's repr or a name (expressions.py's _shown): up to EXPRESSION_SHOWN_NAME
 * characters whole, a longer one as its first 40 and last 10 characters joined by "..." */
static void shown(const char *text, char *out, size_t size) {
    size_t bytes = strlen(text), count = characters(text, bytes);
    if (count <= EXPRESSION_SHOWN_NAME) {
        snprintf(out, size, "%s", text);
        return;
    }
    size_t head = 0, tail = bytes;
    for (int k = 0; k < 40; ++k)
        do ++head; while (((unsigned char)text[head] & 0xC0) == 0x80);
    for (int k = 0; k < 10; ++k)
        do --tail; while (((unsigned char)text[tail] & 0xC0) == 0x80);
    snprintf(out, size, "%.*s...%s", (int)head, text, text + tail);
}

/* adjacent string tokens, one literal: its repr (a bytes literal b'...'), or JoinedStr for an f-string */
static int string_literal(Parser *p) {
    char *content = malloc(strlen(p->text) + 1), *repr = malloc(4 * strlen(p->text) + 16);
    size_t used = 0;
    int formatted = 0, bytes = -1, mixed = 0;
    while (content && repr && p->token == T_STRING) {
        const char *s = p->text + p->position, *quote = s + strcspn(s, "'\"");
        int is_bytes = 0;
        for (const char *c = s; c < quote; ++c) {
            formatted |= (*c | 0x20) == 'f';
            is_bytes |= (*c | 0x20) == 'b';
        }
        mixed |= bytes >= 0 && bytes != is_bytes;
        bytes = is_bytes;
        size_t delimiter = quote[1] == quote[0] && quote[2] == quote[0] && p->length - (size_t)(quote - s) >= 6 ? 3 : 1;
        size_t length = p->length - (size_t)(quote - s) - 2 * delimiter;
        memcpy(content + used, quote + delimiter, length);
        used += length;
        next(p);
    }
    int index = -1;
    if (!content || !repr) {
        fail(p, "out of memory");
    } else if (mixed) {
        fail(p, "cannot mix bytes and nonbytes literals");
    } else if (formatted) {
        index = leaf(p, K_FORBIDDEN, "JoinedStr");
    } else {
        content[used] = '\0';
        repr[0] = 'b';
        native_repr_text(content, repr + (bytes > 0), 4 * strlen(p->text) + 15);
        index = leaf(p, K_LITERAL, "");
        if (index >= 0) shown(repr, p->e->nodes[index].text, sizeof p->e->nodes[index].text);
    }
    free(content);
    free(repr);
    return index;
}

/* a keyword of Python (not a name) */
static int is_keyword(const Parser *p) {
    static const char *const keywords[] = {
        "and", "or", "not", "if", "else", "in", "is", "for", "await", "yield", "import", "from", "def", "class",
        "return", "while", "pass", "del", "as", "assert", "async", "break", "continue", "elif", "except",
        "finally", "global", "nonlocal", "raise", "try", "with", "lambda", "True", "False", "None"};
    for (size_t k = 0; k < sizeof keywords / sizeof *keywords; ++k)
        if (is_word(p, keywords[k])) return 1;
    return 0;
}

static int atom(Parser *p) {
    if (p->token == T_NUMBER) {
        int index = literal_number(p);
        next(p);
        return index;
    }
    if (p->token == T_STRING) return string_literal(p);
    if (is_word(p, "True") || is_word(p, "False") || is_word(p, "None")) {
        int index = leaf(p, K_LITERAL, p->value);
        next(p);
        return index;
    }
    if (is_op(p, "...")) {
        next(p);
        return leaf(p, K_LITERAL, "Ellipsis");
    }
    if (p->token == T_NAME) {
        if (is_keyword(p)) return fail(p, "invalid syntax");
        int index = node(p, K_NAME, 0, p->pending_count);
        if (index >= 0) shown(p->value, p->e->nodes[index].text, sizeof p->e->nodes[index].text);
        next(p);
        return index;
    }
    if (is_op(p, "(")) {
        next(p);
        if (is_op(p, ")")) {
            next(p);
            return leaf(p, K_FORBIDDEN, "Tuple");
        }
        if (is_word(p, "yield")) { /* (yield), (yield x), (yield from x) */
            next(p);
            int from = is_word(p, "from"), dict, items;
            if (from) next(p);
            if ((from || !is_op(p, ")")) && group_contents(p, ")", 0, &dict, &items) != 0) return -1;
            if (!from && is_op(p, ")")) next(p);
            return leaf(p, K_FORBIDDEN, from ? "YieldFrom" : "Yield");
        }
        int inner = is_op(p, "*") ? -2 : expression(p);
        if (inner == -1) return -1;
        if (inner == -2 || is_op(p, ":=") || is_word(p, "for") || is_op(p, ",")) {
            const char *kind = inner == -2 ? "Tuple" : is_op(p, ":=") ? "NamedExpr" : is_word(p, "for")
                                                                                     ? "GeneratorExp" : "Tuple";
            int dict, items;
            if (group_contents(p, ")", inner != -2, &dict, &items) != 0) return -1;
            if (items > 1 || inner == -2) kind = "Tuple";
            return leaf(p, K_FORBIDDEN, kind);
        }
        if (!is_op(p, ")")) return fail(p, p->token == T_END ? "'(' was never closed" : "invalid syntax");
        next(p); /* the inner expression is the atom itself */
        return inner;
    }
    if (is_op(p, "[") || is_op(p, "{")) {
        int braces = is_op(p, "{"), dict, items;
        next(p);
        int empty = is_op(p, "}") && braces;
        if (group_contents(p, braces ? "}" : "]", 0, &dict, &items) != 0) return -1;
        return leaf(p, K_FORBIDDEN, !braces ? "List" : dict || empty ? "Dict" : "Set");
    }
    return fail(p, "invalid syntax");
}

/* a keyword argument: a name, then '=' (not '==') */
static int at_keyword(const Parser *p) {
    if (p->token != T_NAME) return 0;
    const char *after = p->text + p->position + p->length;
    after += strspn(after, " \t\f");
    return after[0] == '=' && after[1] != '=';
}

/* atom trailers: calls, and the refused attribute and subscript */
static int primary(Parser *p) {
    int first = p->pending_count;
    if (push(p, atom(p)) < 0) return -1;
    for (;;) {
        if (is_op(p, "(")) {
            int keywords = 0;
            next(p);
            while (!is_op(p, ")")) {
                if (p->token == T_END) return fail(p, "'(' was never closed");
                if (is_op(p, "*") || is_op(p, "**")) {
                    next(p);
                    if (expression(p) < 0) return -1;
                    push(p, leaf(p, K_FORBIDDEN, "Starred"));
                } else if (at_keyword(p)) {
                    next(p);
                    next(p);
                    if (expression(p) < 0) return -1;
                    ++keywords;
                } else if (push(p, expression(p)) < 0) {
                    return -1;
                }
                if (is_word(p, "for")) { /* f(x for x in y) */
                    while (p->token != T_END && !is_op(p, ")")) next(p);
                    p->pending_count = first + 1;
                    push(p, leaf(p, K_FORBIDDEN, "GeneratorExp"));
                    break;
                }
                if (is_op(p, ",")) next(p);
                else if (!is_op(p, ")")) return fail(p, p->token == T_END ? "'(' was never closed" : "invalid syntax");
            }
            if (p->error) return -1;
            next(p);
            int call = node(p, K_CALL, 0, first);
            if (call < 0) return -1;
            p->e->nodes[call].keywords = keywords;
            push(p, call);
        } else if (is_op(p, ".")) {
            next(p);
            if (p->token != T_NAME || is_keyword(p)) return fail(p, "invalid syntax");
            const Node *owner = &p->e->nodes[p->pending[p->pending_count - 1]];
            const char *base = owner->kind == K_NAME ? owner->text : owner->source; /* "": not a dotted name */
            char *dotted = base[0] ? malloc(strlen(base) + strlen(p->value) + 2) : NULL;
            if (dotted) sprintf(dotted, "%s.%s", base, p->value);
            next(p);
            p->pending_count = first;
            int attribute = leaf(p, K_FORBIDDEN, "Attribute");
            if (attribute >= 0 && dotted)
                shown(dotted, p->e->nodes[attribute].source, sizeof p->e->nodes[attribute].source);
            free(dotted);
            push(p, attribute);
        } else if (is_op(p, "[")) {
            int dict, items;
            next(p);
            if (is_op(p, "]")) return fail(p, "invalid syntax");
            if (group_contents(p, "]", 0, &dict, &items) != 0) return -1;
            p->pending_count = first;
            push(p, leaf(p, K_FORBIDDEN, "Subscript"));
        } else {
            break;
        }
        if (p->error) return -1;
    }
    return p->pending[--p->pending_count];
}

/* ['await'] primary: an Await is refused whole */
static int await_primary(Parser *p) {
    if (!is_word(p, "await")) return primary(p);
    next(p);
    if (primary(p) < 0) return -1;
    return leaf(p, K_FORBIDDEN, "Await");
}

/* the prefix operators - + ~ before an operand, kept on the operator stack (a loop: no recursion per operator) */
static int prefix_operators(Parser *p) {
    while (is_op(p, "-") || is_op(p, "+") || is_op(p, "~")) {
        if (push_op(p, is_op(p, "-") ? O_NEG : is_op(p, "+") ? O_POS : O_INVERT) != 0) return -1;
        next(p);
    }
    return 0;
}

/* apply the operators on the stack above `base` to `operand`, the innermost (last written) first */
static int apply_prefix(Parser *p, int base, int operand) {
    while (p->op_count > base) {
        int op = p->ops[--p->op_count];
        if (operand < 0) continue;
        int first = p->pending_count;
        push(p, operand);
        if (op == O_INVERT) { /* UnaryOp's fields: op, operand */
            int invert = leaf(p, K_FORBIDDEN, "Invert");
            if (invert < 0) return -1;
            p->pending[first] = invert;
            push(p, operand);
            operand = node(p, K_HOLDER, 0, first);
        } else {
            operand = node(p, K_UNARY, op, first);
        }
    }
    return operand;
}

/* factor: prefix operators, then primary ('**' factor)? : right-associative, built from the right */
static int unary(Parser *p) {
    int base = p->op_count, first = p->pending_count;
    if (prefix_operators(p) != 0 || push(p, await_primary(p)) < 0) return -1;
    int levels = 0;
    while (is_op(p, "**")) {
        next(p);
        if (push_op(p, O_MARK) != 0 || prefix_operators(p) != 0 || push(p, await_primary(p)) < 0) return -1;
        ++levels;
    }
    int result = p->pending[--p->pending_count];
    for (; levels > 0; --levels) {
        int marked = p->op_count;
        while (p->ops[marked - 1] != O_MARK) --marked;
        result = apply_prefix(p, marked, result);
        --p->op_count; /* the mark */
        if (result < 0) return -1;
        int left = p->pending[--p->pending_count], at = p->pending_count;
        push(p, left);
        push(p, result);
        result = node(p, K_BINARY, O_POW, at);
    }
    if (p->pending_count != first && !p->error) return fail(p, "invalid syntax");
    return apply_prefix(p, base, result);
}

/* The left-associative binary operators, | ^ & << >> + - * / // % @ (Python's precedence, lowest first), in one loop
 * over the operator stack (shunting-yard): the same tree as a function per level, without a frame per level. */
static const struct {
    const char *op;
    int code, precedence;
    const char *refused; /* the ast name of an operator expressions.py refuses */
} BINARY[] = {{"|", -1, 1, "BitOr"}, {"^", -1, 2, "BitXor"}, {"&", -1, 3, "BitAnd"}, {"<<", -1, 4, "LShift"},
              {">>", -1, 4, "RShift"}, {"+", O_ADD, 5, NULL}, {"-", O_SUB, 5, NULL}, {"*", O_MUL, 6, NULL},
              {"/", O_DIV, 6, NULL}, {"//", O_FLOORDIV, 6, NULL}, {"%", O_MOD, 6, NULL}, {"@", -1, 6, "MatMult"}};
#define BINARY_COUNT (int)(sizeof BINARY / sizeof *BINARY)

/* the operator on the stack, ops[op_count - 1] (an index into BINARY), applied to the last two operands */
static int reduce(Parser *p) {
    int k = p->ops[--p->op_count];
    int right = p->pending[--p->pending_count], first = p->pending_count - 1;
    if (BINARY[k].code >= 0) {
        push(p, right);
        return push(p, node(p, K_BINARY, BINARY[k].code, first));
    }
    if (push(p, leaf(p, K_FORBIDDEN, BINARY[k].refused)) < 0) return -1; /* BinOp's fields: left, op, right */
    push(p, right);
    return push(p, node(p, K_HOLDER, 0, first));
}

static int arithmetic(Parser *p) {
    int base = p->op_count;
    if (push(p, unary(p)) < 0) return -1;
    for (;;) {
        int k = 0;
        while (k < BINARY_COUNT && !is_op(p, BINARY[k].op)) ++k;
        if (k == BINARY_COUNT) break;
        while (p->op_count > base && BINARY[p->ops[p->op_count - 1]].precedence >= BINARY[k].precedence)
            if (reduce(p) < 0) return -1;
        if (push_op(p, k) != 0) return -1;
        next(p);
        if (push(p, unary(p)) < 0) return -1;
    }
    while (p->op_count > base)
        if (reduce(p) < 0) return -1;
    return p->pending[--p->pending_count];
}

/* a chain of comparisons, any length: the operators on the operator stack until the chain ends */
static int comparison(Parser *p) {
    int first = p->pending_count, base = p->op_count;
    if (push(p, arithmetic(p)) < 0) return -1;
    static const char *const ops[] = {"==", "!=", "<", "<=", ">", ">="};
    static const int codes[] = {O_EQ, O_NE, O_LT, O_LE, O_GT, O_GE};
    const char *refused = NULL;
    for (;;) {
        size_t k = 0;
        while (k < 6 && !is_op(p, ops[k])) ++k;
        if (k < 6) {
            next(p);
        } else if (is_word(p, "in") || is_word(p, "is") || (is_word(p, "not") && !strncmp(
                       p->text + p->position + p->length + strspn(p->text + p->position + p->length, " \t\f"), "in",
                       2))) {
            int negated = is_word(p, "not");
            int is = is_word(p, "is");
            next(p);
            if (negated) next(p);
            if (is && is_word(p, "not")) {
                next(p);
                negated = 1;
            }
            if (!refused) refused = is ? (negated ? "IsNot" : "Is") : (negated ? "NotIn" : "In");
        } else {
            break;
        }
        if (push_op(p, k < 6 ? codes[k] : O_EQ) != 0 || push(p, arithmetic(p)) < 0) return -1;
    }
    int count = p->op_count - base;
    if (!count) return p->pending[--p->pending_count];
    if (refused) { /* Compare's fields: left, ops, comparators: the first refused operator before the comparators */
        p->op_count = base;
        int refusal = leaf(p, K_FORBIDDEN, refused);
        if (push(p, refusal) < 0) return -1;
        for (int i = p->pending_count - 1; i > first + 1; --i) p->pending[i] = p->pending[i - 1];
        p->pending[first + 1] = refusal;
        return node(p, K_HOLDER, 0, first);
    }
    int made = node(p, K_COMPARE, 0, first);
    if (made < 0) return -1;
    /* the operators follow the operands in the children list: left, comparators..., then the operator codes */
    if (grow(p, &p->e->children, &p->child_capacity, p->e->child_count + count) != 0) return -1;
    for (int i = 0; i < count; ++i) p->e->children[p->e->child_count++] = -1000 - p->ops[base + i];
    p->op_count = base;
    p->e->nodes[made].op = count; /* the number of operators */
    return made;
}

/* `not` ... `not` comparison: a loop, then the nodes from the inside out */
static int not_test(Parser *p) {
    int count = 0;
    while (is_word(p, "not")) {
        next(p);
        ++count;
    }
    int result = comparison(p);
    for (; count > 0 && result >= 0; --count) {
        int first = p->pending_count;
        push(p, result);
        result = node(p, K_UNARY, O_NOT, first);
    }
    return result;
}

/* and_test ('or' and_test)*, and_test: not_test ('and' not_test)*: flat BoolOps, in one loop */
static int or_test(Parser *p) {
    int first = p->pending_count, ors = 0;
    do {
        if (ors) next(p);
        int and_first = p->pending_count, ands = 0;
        do {
            if (ands) next(p);
            if (push(p, not_test(p)) < 0) return -1;
            ++ands;
        } while (is_word(p, "and"));
        if (ands > 1 && push(p, node(p, K_BOOL, O_AND, and_first)) < 0) return -1;
        ++ors;
    } while (is_word(p, "or"));
    if (ors > 1) return node(p, K_BOOL, O_OR, first);
    return p->pending[--p->pending_count];
}

/* or_test ['if' or_test 'else' expression]: the one recursion of the parser with a bracket (a bracket level, an
 * argument, a lambda's body) or an if-else; both are bounded by the text (EXPRESSION_MAX_BRACKETS brackets, an
 * if-else takes 9 characters), the guard is for safety only */
static int expression(Parser *p) {
    if (p->error) return -1;
    if (p->depth >= 2 * EXPRESSION_MAX_LENGTH / 8) return fail(p, "too deeply nested");
    ++p->depth;
    int first = p->pending_count, result = -1;
    if (is_word(p, "lambda")) { /* a lambda is an expression, not an operand */
        while (p->token != T_END && !is_op(p, ":")) next(p);
        if (p->token == T_END) {
            fail(p, "invalid syntax");
            goto done;
        }
        next(p);
        if (expression(p) >= 0) result = leaf(p, K_FORBIDDEN, "Lambda"); /* its body is not walked */
        goto done;
    }
    if (push(p, or_test(p)) < 0) goto done;
    if (!is_word(p, "if")) {
        result = p->pending[--p->pending_count];
        goto done;
    }
    next(p);
    if (push(p, or_test(p)) < 0) goto done;
    if (!is_word(p, "else")) {
        fail(p, "expected 'else' after 'if' expression");
        goto done;
    }
    next(p);
    if (push(p, expression(p)) < 0) goto done;
    /* Python's IfExp fields: test, body, orelse (the body was parsed first) */
    int body = p->pending[first], test = p->pending[first + 1];
    p->pending[first] = test, p->pending[first + 1] = body;
    result = node(p, K_IF, 0, first);
done:
    --p->depth;
    return p->error ? -1 : result;
}

/* --- the checks: expressions.py's walk over the tree, breadth first -------------------------------------- */

static int node_weight(const Expression *e, int index) {
    const Node *n = &e->nodes[index];
    switch (n->kind) {
    case K_NAME: return 2;                            /* Name, Load */
    case K_UNARY: case K_BINARY: case K_BOOL: return 2; /* the node and its operator */
    case K_COMPARE: return 1 + n->op;                 /* the node and one operator each */
    default: return 1;
    }
}

static void join_names(char *out, size_t size, const char *const *names, size_t count, const char *const *more,
                       size_t more_count) {
    size_t used = 0;
    out[0] = '\0';
    for (size_t i = 0; i < count + more_count && used < size; ++i)
        used += (size_t)snprintf(out + used, size - used, "%s%s", i ? ", " : "", i < count ? names[i]
                                                                                         : more[i - count]);
}

/* the first literal that is not a real number, depth first from the root in Python's field order (the literal
 * pass of expressions.py, a NodeTransformer): 0, or -1 with `why` */
static int check_literals(const Expression *e, int *stack, char *why, size_t size) {
    int top = 0;
    stack[top++] = e->root;
    while (top > 0) {
        const Node *n = &e->nodes[stack[--top]];
        if (n->kind == K_LITERAL) {
            if (n->op == -1) snprintf(why, size, "integer literal beyond the largest real number (1.8e308)");
            else snprintf(why, size, "literal %s is not a real number", n->text);
            return -1;
        }
        for (int i = n->count - 1; i >= 0; --i) stack[top++] = e->children[n->first + i];
    }
    return 0;
}

static int check(Expression *e, char *why, size_t size) {
    int *queue = malloc((size_t)(e->node_count + 1) * sizeof *queue);
    int *called = calloc((size_t)(e->node_count + 1), sizeof *called);
    if (!queue || !called) {
        free(queue);
        free(called);
        snprintf(why, size, "out of memory");
        return -1;
    }
    int head = 0, tail = 0, weight = 1; /* the Expression node */
    queue[tail++] = e->root;
    for (int i = 0; i < e->node_count; ++i)
        if (e->nodes[i].kind == K_CALL && e->nodes[i].count) called[e->children[e->nodes[i].first]] = 1;
    while (head < tail) { /* every node is the child of one node only: the queue holds each once */
        const Node *n = &e->nodes[queue[head++]];
        weight += node_weight(e, (int)(n - e->nodes));
        for (int i = 0; i < n->count; ++i) queue[tail++] = e->children[n->first + i];
    }
    int problem = 0;
    const char *allowed_constants[] = {"pi", "e"};
    char list[1024];
    for (int q = 0; q < tail && !problem; ++q) {
        Node *n = &e->nodes[queue[q]];
        if (n->kind == K_FORBIDDEN) {
            snprintf(why, size, "%s is not allowed", n->text);
            problem = 1;
        } else if (n->kind == K_CALL) {
            Node *function = &e->nodes[e->children[n->first]];
            if (function->kind != K_NAME || function_index(function->text) < 0) {
                join_names(list, sizeof list, FUNCTIONS, FUNCTION_COUNT, NULL, 0);
                const char *called_name = function->kind == K_NAME ? function->text : function->source;
                snprintf(why, size, "call of %s%s%s is not allowed; allowed functions: %s", called_name[0] ? "'" : "",
                         called_name[0] ? called_name : "an expression", called_name[0] ? "'" : "", list);
                problem = 1;
            } else if (n->keywords) {
                snprintf(why, size, "keyword arguments are not allowed");
                problem = 1;
            }
        } else if (n->kind == K_NAME) {
            int known = -1;
            for (size_t i = 0; i < e->argument_count; ++i)
                if (!strcmp(e->names[i], n->text)) known = (int)i;
            int constant = !strcmp(n->text, "pi") ? 0 : !strcmp(n->text, "e") ? 1 : -1;
            int function = function_index(n->text);
            n->argument = known >= 0 ? known : constant >= 0 ? -1 - constant : -100 - function;
            n->called = called[queue[q]];
            if (function >= 0 && known < 0 && constant < 0 && !n->called) {
                snprintf(why, size, "'%s' is a function: call it, e.g. %s(x)", n->text, n->text);
                problem = 1;
            } else if (known < 0 && constant < 0 && function < 0) {
                join_names(list, sizeof list, (const char *const *)e->names, e->argument_count, allowed_constants, 2);
                snprintf(why, size, "unknown name '%s'; allowed names: %s", n->text, list);
                problem = 1;
            }
        }
    }
    if (!problem && weight > EXPRESSION_MAX_NODES) { /* after the walk: what is not allowed is named first */
        snprintf(why, size, "expression has more than %d syntax nodes", EXPRESSION_MAX_NODES);
        problem = 1;
    }
    if (!problem && check_literals(e, queue, why, size) != 0) problem = 1; /* the queue's room: a stack as large */
    free(queue);
    free(called);
    return problem ? -1 : 0;
}

/* the text without Python's whitespace (str.strip) at either end: [*start, *end) */
static void strip(const char *text, const char **start, const char **end) {
    const char *s = text, *last = text;
    unsigned cp;
    int n;
    while (*s && (n = utf8(s, &cp)) > 0 && is_space(cp)) s += n;
    *start = s;
    last = s;
    while (*s) {
        n = utf8(s, &cp);
        if (n <= 0) n = 1;
        else if (is_space(cp)) {
            s += n;
            continue;
        }
        s += n;
        last = s;
    }
    *end = last;
}

Expression *expression_parse(const char *text, const char *const *names, size_t count, char *why, size_t size) {
    const char *start, *end;
    strip(text, &start, &end);
    if (start == end) {
        snprintf(why, size, "empty expression");
        return NULL;
    }
    if (characters(text, strlen(text)) > EXPRESSION_MAX_LENGTH) {
        snprintf(why, size, "expression longer than %d characters", EXPRESSION_MAX_LENGTH);
        return NULL;
    }
    size_t length = (size_t)(end - start);
    for (size_t i = 0; i < length; ++i)
        if (start[i] == '\n' || start[i] == '\r' || start[i] == '\\') {
            snprintf(why, size, "%s at column %zu: an expression is one line",
                     start[i] == '\\' ? "backslash" : "line break", characters(start, i) + 1);
            return NULL;
        }
    Expression *e = calloc(1, sizeof *e);
    Parser *p = calloc(1, sizeof *p);
    char *stripped = malloc(length + 1);
    if (!e || !p || !stripped) {
        free(e);
        free(p);
        free(stripped);
        snprintf(why, size, "out of memory");
        return NULL;
    }
    memcpy(stripped, start, length);
    stripped[length] = '\0';
    e->argument_count = count;
    e->names = calloc(count + 1, sizeof *e->names);
    for (size_t i = 0; e->names && i < count; ++i) e->names[i] = strdup(names[i]);
    p->text = stripped;
    p->e = e;
    next(p);
    e->root = expression(p);
    if (!p->error && p->token != T_END) fail(p, "invalid syntax");
    int failed = p->error != NULL;
    if (failed) snprintf(why, size, "syntax error at column %zu: %s", p->error_column, p->error);
    free(p->pending);
    free(p->ops);
    free(p);
    free(stripped);
    if (failed || check(e, why, size) != 0) {
        expression_free(e);
        return NULL;
    }
    return e;
}

void expression_free(Expression *e) {
    if (!e) return;
    for (size_t i = 0; e->names && i < e->argument_count; ++i) free(e->names[i]);
    free(e->names);
    free(e->nodes);
    free(e->children);
    free(e);
}

/* --- evaluation: Python's float semantics, values and dual numbers (dual.py) --------------------------------- */

/* V_COMPLEX: Python's complex result of a negative number to a fractional power, carried (without its value)
 * through arithmetic; any other use of it is refused */
enum { V_FLOAT, V_BOOL, V_DUAL, V_COMPLEX, V_INT }; /* V_INT: Python's int from arithmetic on bools */
#define COMPLEX 1 /* py_pow's answer for a complex result */

typedef struct {
    double v, d;
    int kind;
} Value;

typedef struct {
    const Expression *e;
    const double *args;
    int seed; /* the argument carrying the slope 1, or -1 */
    char *why;
    size_t size;
} Run;

static int error(Run *r, const char *format, ...) {
    va_list args;
    va_start(args, format);
    vsnprintf(r->why, r->size, format, args);
    va_end(args);
    return -1;
}

static Value number(double v) { return (Value){v, 0.0, V_FLOAT}; }
static Value dual(double v, double d) { return (Value){v, d, V_DUAL}; }
static int truth(Value x) { return x.v != 0.0 || isnan(x.v); }

/* Python's float ** float (float_pow): 0 and *out, or -1 with the error */
static int py_pow(Run *r, double x, double y, double *out) {
    if (y == 0.0) { *out = 1.0; return 0; }
    if (isnan(x)) { *out = x; return 0; }
    if (isnan(y)) { *out = x == 1.0 ? 1.0 : y; return 0; }
    if (isinf(y)) {
        x = fabs(x);
        *out = x == 1.0 ? 1.0 : (y > 0) == (x > 1.0) ? INFINITY : 0.0;
        return 0;
    }
    int odd = fmod(fabs(y), 2.0) == 1.0;
    if (isinf(x)) {
        *out = y > 0 ? (odd ? x : fabs(x)) : (odd ? copysign(0.0, x) : 0.0);
        return 0;
    }
    if (x == 0.0) {
        if (y < 0.0) return error(r, "0.0 cannot be raised to a negative power");
        *out = odd ? x : 0.0;
        return 0;
    }
    int negate = 0;
    if (x < 0.0) {
        if (y != floor(y)) return COMPLEX;
        x = -x;
        negate = odd;
    }
    if (x == 1.0) { *out = negate ? -1.0 : 1.0; return 0; }
    double result = pow(x, y);
    if (isinf(result)) return error(r, "(34, 'Numerical result out of range')");
    *out = negate ? -result : result;
    return 0;
}

static int py_mod(Run *r, double x, double y, double *out) {
    if (y == 0.0) return error(r, "float modulo");
    *out = native_py_mod(x, y);
    return 0;
}

static int py_floordiv(Run *r, double x, double y, double *out) {
    if (y == 0.0) return error(r, "float floor division by zero");
    double mod = fmod(x, y), div = (x - mod) / y;
    if (mod && (y < 0) != (mod < 0)) div -= 1.0;
    double floordiv;
    if (div) {
        floordiv = floor(div);
        if (div - floordiv > 0.5) floordiv += 1.0;
    } else {
        floordiv = copysign(0.0, x / y);
    }
    *out = floordiv;
    return 0;
}

/* CPython's math_1: a NaN from a non-NaN argument is a domain error, an infinity from a finite one a range error
 * (can_overflow) or a domain error */
static int math_1(Run *r, double (*f)(double), double x, int can_overflow, double *out) {
    double y = f(x);
    if (isnan(y) && !isnan(x)) return error(r, "math domain error");
    if (isinf(y) && isfinite(x)) return error(r, can_overflow ? "math range error" : "math domain error");
    *out = y;
    return 0;
}

static int py_log(Run *r, double x, double *out) {
    if (isnan(x) || (isinf(x) && x > 0)) { *out = x; return 0; }
    if (!(x > 0)) return error(r, "math domain error");
    *out = log(x);
    return 0;
}

static int py_log10(Run *r, double x, double *out) {
    if (isnan(x) || (isinf(x) && x > 0)) { *out = x; return 0; }
    if (!(x > 0)) return error(r, "math domain error");
    *out = log10(x);
    return 0;
}

static int evaluate(Run *r, int index, Value *out);

static int refuse_complex(Run *r) {
    return error(r, "a negative number to a fractional power is complex");
}

static int integral(Value x) { return x.kind == V_BOOL || x.kind == V_INT; }

/* an int result (no negative zero); beyond 2**53 the C evaluator cannot follow Python's unbounded int */
static int integer(Run *r, double v, Value *out) {
    if (fabs(v) > 9007199254740992.0) return error(r, "integer result beyond 2**53");
    *out = (Value){v + 0.0, 0.0, V_INT};
    return 0;
}

/* int op int (Python's int arithmetic; true division and negative powers give floats) */
static int integer_binary(Run *r, int op, double a, double b, Value *out) {
    double v;
    switch (op) {
    case O_ADD: return integer(r, a + b, out);
    case O_SUB: return integer(r, a - b, out);
    case O_MUL: return integer(r, a * b, out);
    case O_DIV:
        if (b == 0.0) return error(r, "division by zero");
        *out = number(a / b);
        return 0;
    case O_FLOORDIV:
        if (b == 0.0) return error(r, "integer division or modulo by zero");
        py_floordiv(r, a, b, &v);
        return integer(r, v, out);
    case O_MOD:
        if (b == 0.0) return error(r, "integer modulo by zero");
        py_mod(r, a, b, &v);
        return integer(r, v, out);
    default: /* O_POW */
        if (b < 0.0) {
            if (a == 0.0) return error(r, "0.0 cannot be raised to a negative power");
            if (py_pow(r, a, b, &v) != 0) return -1;
            *out = number(v);
            return 0;
        }
        return integer(r, pow(a, b), out);
    }
}

static int binary(Run *r, int op, Value a, Value b, Value *out) {
    double v;
    int is_dual = a.kind == V_DUAL || b.kind == V_DUAL;
    if (integral(a) && integral(b)) return integer_binary(r, op, a.v, b.v, out);
    if (a.kind == V_COMPLEX || b.kind == V_COMPLEX) {
        if (is_dual) return error(r, "complex result");
        if (op == O_FLOORDIV || op == O_MOD) return refuse_complex(r);
        *out = (Value){NAN, 0.0, V_COMPLEX};
        return 0;
    }
    double ad = a.kind == V_DUAL ? a.d : 0.0, bd = b.kind == V_DUAL ? b.d : 0.0;
    switch (op) {
    case O_ADD:
        *out = is_dual ? dual(a.v + b.v, ad + bd) : number(a.v + b.v);
        return 0;
    case O_SUB:
        *out = is_dual ? dual(a.v - b.v, ad - bd) : number(a.v - b.v);
        return 0;
    case O_MUL:
        *out = is_dual ? dual(a.v * b.v, ad * b.v + a.v * bd) : number(a.v * b.v);
        return 0;
    case O_DIV:
        if (b.v == 0.0) return error(r, "float division by zero");
        v = a.v / b.v;
        *out = is_dual ? dual(v, (ad - v * bd) / b.v) : number(v);
        return 0;
    case O_FLOORDIV:
        if (py_floordiv(r, a.v, b.v, &v) != 0) return -1;
        *out = is_dual ? dual(v, 0.0) : number(v);
        return 0;
    case O_MOD:
        if (py_mod(r, a.v, b.v, &v) != 0) return -1;
        if (is_dual) {
            if (b.v == 0.0) return error(r, "float division by zero");
            double q = floor(a.v / b.v);
            if (isinf(q)) return error(r, "cannot convert float infinity to integer");
            if (isnan(q)) return error(r, "cannot convert float NaN to integer");
            *out = dual(v, ad - q * bd);
        } else {
            *out = number(v);
        }
        return 0;
    case O_POW: {
        int pow_status = py_pow(r, a.v, b.v, &v);
        if (pow_status < 0) return -1;
        if (pow_status == COMPLEX) {
            if (is_dual) return error(r, "complex result");
            *out = (Value){NAN, 0.0, V_COMPLEX};
            return 0;
        }
        if (!is_dual) {
            *out = number(v);
            return 0;
        }
        double slope = 0.0, p;
        if (ad) {
            if (py_pow(r, a.v, b.v - 1.0, &p) != 0) return error(r, "complex result");
            slope += b.v * p * ad;
        }
        if (bd) {
            double l = 0.0;
            if (py_log(r, a.v, &l) != 0) return -1;
            slope += v * l * bd;
        }
        *out = dual(v, slope);
        return 0;
    }
    default:
        return error(r, "unknown operator");
    }
}

static int compare(int op, double a, double b) {
    switch (op) {
    case O_EQ: return a == b;
    case O_NE: return a != b;
    case O_LT: return a < b;
    case O_LE: return a <= b;
    case O_GT: return a > b;
    default: return a >= b;
    }
}

/* a one-argument function of dual.py's _unary: f at the value; df only where the slope is not zero */
static int unary_function(Run *r, const char *name, Value x, Value *out) {
    double y, d = 0.0, t;
    int is_dual = x.kind == V_DUAL;
    int slope = is_dual && x.d != 0.0;
    double v = x.v;
    if (!strcmp(name, "abs") && (x.kind == V_BOOL || x.kind == V_INT)) {
        *out = (Value){fabs(v), 0.0, V_INT};
        return 0;
    }
    if (!strcmp(name, "abs")) {
        y = fabs(v);
        if (slope) d = (v > 0 ? 1.0 : v < 0 ? -1.0 : 0.0) * x.d;
    } else if (!strcmp(name, "sign") || !strcmp(name, "floor") || !strcmp(name, "ceil")) {
        if (!strcmp(name, "sign")) {
            y = v > 0 ? 1.0 : v < 0 ? -1.0 : 0.0;
        } else {
            if (isinf(v)) return error(r, "cannot convert float infinity to integer");
            if (isnan(v)) return error(r, "cannot convert float NaN to integer");
            y = !strcmp(name, "floor") ? floor(v) : ceil(v);
            if (y == 0.0) y = 0.0; /* Python's int 0 is +0.0 as a float */
        }
        *out = is_dual ? dual(y, 0.0) : number(y);
        return 0;
    } else if (!strcmp(name, "sqrt")) {
        if (math_1(r, sqrt, v, 0, &y) != 0) return -1;
        if (slope) {
            if (math_1(r, sqrt, v, 0, &t) != 0) return -1;
            if (t == 0.0) return error(r, "float division by zero");
            d = 0.5 / t * x.d;
        }
    } else if (!strcmp(name, "exp")) {
        if (math_1(r, exp, v, 1, &y) != 0) return -1;
        if (slope) {
            if (math_1(r, exp, v, 1, &t) != 0) return -1;
            d = t * x.d;
        }
    } else if (!strcmp(name, "log")) {
        if (py_log(r, v, &y) != 0) return -1;
        if (slope) {
            if (v == 0.0) return error(r, "float division by zero");
            d = 1.0 / v * x.d;
        }
    } else if (!strcmp(name, "log10")) {
        if (py_log10(r, v, &y) != 0) return -1;
        if (slope) {
            double ten;
            py_log(r, 10.0, &ten);
            if (v * ten == 0.0) return error(r, "float division by zero");
            d = 1.0 / (v * ten) * x.d;
        }
    } else if (!strcmp(name, "sin") || !strcmp(name, "cos") || !strcmp(name, "tan")) {
        int which = name[0] == 's' ? 0 : name[0] == 'c' ? 1 : 2;
        if (math_1(r, which == 0 ? sin : which == 1 ? cos : tan, v, 0, &y) != 0) return -1;
        if (slope) {
            if (which == 0) {
                if (math_1(r, cos, v, 0, &t) != 0) return -1;
                d = t * x.d;
            } else if (which == 1) {
                if (math_1(r, sin, v, 0, &t) != 0) return -1;
                d = -t * x.d;
            } else {
                if (math_1(r, tan, v, 0, &t) != 0) return -1;
                double squared;
                if (py_pow(r, t, 2.0, &squared) != 0) return -1;
                d = (1.0 + squared) * x.d;
            }
        }
    } else if (!strcmp(name, "asin") || !strcmp(name, "acos")) {
        int a = name[1] == 's';
        if (math_1(r, a ? asin : acos, v, 0, &y) != 0) return -1;
        if (slope) {
            if (math_1(r, sqrt, 1.0 - v * v, 0, &t) != 0) return -1;
            if (t == 0.0) return error(r, "float division by zero");
            d = (a ? 1.0 : -1.0) / t * x.d;
        }
    } else if (!strcmp(name, "atan")) {
        if (math_1(r, atan, v, 0, &y) != 0) return -1;
        if (slope) {
            if (1.0 + v * v == 0.0) return error(r, "float division by zero");
            d = 1.0 / (1.0 + v * v) * x.d;
        }
    } else if (!strcmp(name, "sinh") || !strcmp(name, "cosh")) {
        int s = name[0] == 's';
        if (math_1(r, s ? sinh : cosh, v, 1, &y) != 0) return -1;
        if (slope) {
            if (math_1(r, s ? cosh : sinh, v, 1, &t) != 0) return -1;
            d = t * x.d;
        }
    } else if (!strcmp(name, "tanh")) {
        if (math_1(r, tanh, v, 0, &y) != 0) return -1;
        if (slope) {
            double squared;
            if (math_1(r, tanh, v, 0, &t) != 0 || py_pow(r, t, 2.0, &squared) != 0) return -1;
            d = (1.0 - squared) * x.d;
        }
    } else {
        return error(r, "unknown function %s", name);
    }
    *out = is_dual ? dual(y, d) : number(y);
    return 0;
}

static int arity_error(Run *r, const char *name, int given, int wanted) {
    static const char *const unary[] = {"abs", "sqrt", "exp", "log", "log10", "sin", "cos", "tan", "asin", "acos",
                                        "atan", "sinh", "cosh", "tanh"};
    int is_unary = 0;
    for (size_t i = 0; i < sizeof unary / sizeof *unary; ++i) is_unary |= !strcmp(name, unary[i]);
    int step = !strcmp(name, "sign") || !strcmp(name, "floor") || !strcmp(name, "ceil");
    if (r->seed >= 0 && (is_unary || step)) /* dual.py's wrappers */
        return error(r, "%s() takes 1 positional argument but %d were given",
                     is_unary ? "_unary.<locals>.dual_f" : "_step.<locals>.<lambda>", given);
    if (r->seed >= 0 && wanted == 2) {
        static const char *const second[] = {"x", "y", "y"}; /* _atan2(y, x), _fmod(x, y), _copysign(x, y) */
        int which = !strcmp(name, "atan2") ? 0 : !strcmp(name, "fmod") ? 1 : 2;
        if (given > 2) return error(r, "_%s() takes 2 positional arguments but %d were given", name, given);
        if (given == 1) return error(r, "_%s() missing 1 required positional argument: '%s'", name, second[which]);
        return error(r, "_%s() missing 2 required positional arguments: '%s' and '%s'", name,
                     which == 0 ? "y" : "x", second[which]);
    }
    if (is_unary && strcmp(name, "abs"))
        return error(r, "math.%s() takes exactly one argument (%d given)", name, given);
    if (!strcmp(name, "abs")) return error(r, "abs() takes exactly one argument (%d given)", given);
    if (!strcmp(name, "sign")) return error(r, "_sign() takes 1 positional argument but %d were given", given);
    if (step) return error(r, "<lambda>() takes 1 positional argument but %d were given", given);
    return error(r, "%s expected %d arguments, got %d", name, wanted, given);
}

static int call_with(Run *r, const char *name, Value *args, int given, Value *out);

/* a call: its arguments in a small array on the stack (the evaluator recurses once per level: a small frame),
 * more than CALL_ARGUMENTS of them on the heap */
#define CALL_ARGUMENTS 8
static int call(Run *r, const Node *n, Value *out) {
    const Expression *e = r->e;
    const Node *function = &e->nodes[e->children[n->first]];
    int given = n->count - 1, status = 0;
    Value local[CALL_ARGUMENTS];
    Value *args = given <= CALL_ARGUMENTS ? local : malloc((size_t)given * sizeof *args);
    if (!args) return error(r, "out of memory");
    for (int i = 0; i < given && status == 0; ++i) status = evaluate(r, e->children[n->first + 1 + i], &args[i]);
    if (status == 0) status = call_with(r, function->text, args, given, out);
    if (args != local) free(args);
    return status;
}

static int call_with(Run *r, const char *name, Value *args, int given, Value *out) {
    for (int i = 0; i < given; ++i)
        if (args[i].kind == V_COMPLEX) return refuse_complex(r);
    if (!strcmp(name, "min") || !strcmp(name, "max")) {
        if (given == 0) return error(r, "%s expected at least 1 argument, got 0", name);
        if (given == 1) return error(r, "'%s' object is not iterable", args[0].kind == V_BOOL ? "bool"
                                                                        : args[0].kind == V_DUAL ? "Dual" : "float");
        Value best = args[0];
        for (int i = 1; i < given; ++i)
            if (name[1] == 'i' ? args[i].v < best.v : args[i].v > best.v) best = args[i];
        *out = best;
        return 0;
    }
    if (!strcmp(name, "hypot")) {
        double value;
        if (given == 0) value = 0.0;
        else if (given == 1) value = fabs(args[0].v);
        else if (given == 2) value = hypot(args[0].v, args[1].v);
        else { /* scaled by the largest magnitude: within a few ulps of Python's correctly rounded sum */
            double largest = 0.0, sum = 0.0;
            int nan = 0;
            for (int i = 0; i < given; ++i) {
                if (isinf(args[i].v)) largest = INFINITY;
                nan |= isnan(args[i].v);
                if (fabs(args[i].v) > largest) largest = fabs(args[i].v);
            }
            if (isinf(largest) || nan || largest == 0.0) {
                value = isinf(largest) ? INFINITY : nan ? NAN : 0.0;
            } else {
                for (int i = 0; i < given; ++i) sum += (args[i].v / largest) * (args[i].v / largest);
                value = largest * sqrt(sum);
            }
        }
        if (r->seed < 0) {
            *out = number(value);
            return 0;
        }
        double slope = 0.0; /* dual.py: sum(a.value*a.slope for a in args if a.slope), from the integer 0 */
        for (int i = 0; i < given; ++i)
            if (args[i].kind == V_DUAL && args[i].d) slope = slope + args[i].v * args[i].d;
        if (slope && value == 0.0) return error(r, "float division by zero");
        *out = dual(value, slope ? slope / value : 0.0);
        return 0;
    }
    if (!strcmp(name, "log") && given == 2 && r->seed < 0) {
        double num = 0.0, den = 0.0;
        if (py_log(r, args[0].v, &num) != 0 || py_log(r, args[1].v, &den) != 0) return -1;
        if (den == 0.0) return error(r, "float division by zero");
        *out = number(num / den);
        return 0;
    }
    if (!strcmp(name, "log") && given != 1) {
        if (r->seed >= 0) return arity_error(r, name, given, 1);
        return error(r, "math.log requires 1 to 2 arguments");
    }
    if (!strcmp(name, "atan2") || !strcmp(name, "fmod") || !strcmp(name, "copysign")) {
        if (given != 2) return arity_error(r, name, given, 2);
        Value x = args[0], y = args[1];
        double xd = x.kind == V_DUAL ? x.d : 0.0, yd = y.kind == V_DUAL ? y.d : 0.0, value, slope = 0.0;
        int dual_result = r->seed >= 0; /* dual.py lifts both arguments: a Dual always */
        if (!strcmp(name, "atan2")) {
            value = atan2(x.v, y.v);
            if (dual_result && (yd || xd)) {
                double r2 = y.v * y.v + x.v * x.v;
                if (r2 == 0.0) return error(r, "float division by zero");
                slope = (y.v * xd - x.v * yd) / r2;
            }
        } else if (!strcmp(name, "fmod")) {
            if (isinf(x.v) || y.v == 0.0) {
                if (!isnan(x.v) && !isnan(y.v)) return error(r, "math domain error");
            }
            value = fmod(x.v, y.v);
            if (dual_result) {
                double n = 0.0;
                if (yd) {
                    if (y.v == 0.0) return error(r, "float division by zero");
                    double q = (x.v - value) / y.v;
                    if (isinf(q)) return error(r, "cannot convert float infinity to integer");
                    if (isnan(q)) return error(r, "cannot convert float NaN to integer");
                    n = nearbyint(q); /* Python's round: to even */
                }
                slope = xd - n * yd;
            }
        } else {
            value = copysign(x.v, y.v);
            if (dual_result) slope = copysign(1.0, x.v) == copysign(1.0, y.v) ? xd : -xd;
        }
        *out = dual_result ? dual(value, slope) : number(value);
        return 0;
    }
    if (given != 1) return arity_error(r, name, given, 1);
    return unary_function(r, name, args[0], out);
}

static int evaluate(Run *r, int index, Value *out) {
    const Expression *e = r->e;
    const Node *n = &e->nodes[index];
    Value a, b;
    switch (n->kind) {
    case K_NUMBER:
        *out = number(n->number);
        return 0;
    case K_NAME:
        if (n->argument >= 0) {
            *out = n->argument == r->seed ? dual(r->args[n->argument], 1.0) : number(r->args[n->argument]);
        } else {
            *out = number(CONSTANTS[-1 - n->argument]);
        }
        return 0;
    case K_UNARY:
        if (evaluate(r, e->children[n->first], &a) != 0) return -1;
        if (a.kind == V_COMPLEX) {
            if (n->op == O_NOT) return refuse_complex(r);
            *out = a;
            return 0;
        }
        if (n->op == O_NOT) {
            *out = (Value){truth(a) ? 0.0 : 1.0, 0.0, V_BOOL};
        } else if (n->op == O_NEG) {
            if (integral(a)) return integer(r, -a.v, out);
            *out = a.kind == V_DUAL ? dual(-a.v, -a.d) : number(-a.v);
        } else {
            *out = a.kind == V_BOOL ? (Value){a.v, 0.0, V_INT} : a;
        }
        return 0;
    case K_BINARY:
        if (evaluate(r, e->children[n->first], &a) != 0 || evaluate(r, e->children[n->first + 1], &b) != 0)
            return -1;
        return binary(r, n->op, a, b, out);
    case K_BOOL:
        for (int i = 0; i < n->count; ++i) {
            if (evaluate(r, e->children[n->first + i], &a) != 0) return -1;
            if (i == n->count - 1) break;
            if (a.kind == V_COMPLEX) return refuse_complex(r);
            if (n->op == O_AND ? !truth(a) : truth(a)) break;
        }
        *out = a;
        return 0;
    case K_COMPARE: { /* children: the operands, then the operator codes */
        int operators = n->op;
        if (evaluate(r, e->children[n->first], &a) != 0) return -1;
        int result = 1;
        for (int i = 0; i < operators && result; ++i) {
            if (evaluate(r, e->children[n->first + 1 + i], &b) != 0) return -1;
            if (a.kind == V_COMPLEX || b.kind == V_COMPLEX) return refuse_complex(r);
            int op = -1000 - e->children[n->first + n->count + i];
            result = compare(op, a.v, b.v);
            a = b;
        }
        *out = (Value){result ? 1.0 : 0.0, 0.0, V_BOOL};
        return 0;
    }
    case K_IF:
        if (evaluate(r, e->children[n->first], &a) != 0) return -1;
        if (a.kind == V_COMPLEX) return refuse_complex(r);
        return evaluate(r, e->children[n->first + (truth(a) ? 1 : 2)], out);
    case K_CALL:
        return call(r, n, out);
    default:
        return error(r, "cannot evaluate");
    }
}

static void arguments_text(const Expression *e, const double *args, const int *order, char *out, size_t size) {
    size_t used = 0;
    out[0] = '\0';
    for (size_t k = 0; k < e->argument_count && used < size; ++k) {
        const size_t i = order ? (size_t)order[k] : k;
        char value[40];
        native_measured(args[i], value, sizeof value);
        used += (size_t)snprintf(out + used, size - used, "%s%s=%s", k ? ", " : "", e->names[i], value);
    }
}

static int run(const Expression *e, const double *args, int seed, const int *order, double *result, char *why,
               size_t size) {
    char problem[512];
    Run r = {e, args, seed, problem, sizeof problem};
    Value value;
    char text[1200];
    if (evaluate(&r, e->root, &value) != 0) {
        arguments_text(e, args, order, text, sizeof text);
        snprintf(why, size, "evaluation failed (%s) for %s", problem, text);
        return -1;
    }
    if (value.kind == V_COMPLEX && seed < 0) {
        snprintf(why, size, "result is complex (a negative number to a fractional power)");
        return -1;
    }
    *result = seed >= 0 ? (value.kind == V_DUAL ? value.d : 0.0) : value.v;
    if (!isfinite(*result)) {
        arguments_text(e, args, order, text, sizeof text);
        snprintf(why, size, "result is not finite for %s", text);
        return -1;
    }
    return 0;
}

int expression_value(const Expression *e, const double *args, double *result, char *why, size_t size) {
    return run(e, args, -1, NULL, result, why, size);
}

int expression_value_in_order(const Expression *e, const double *args, const int *order, double *result, char *why,
                              size_t size) {
    return run(e, args, -1, order, result, why, size);
}

int expression_derivative(const Expression *e, const double *args, size_t seed, double *result, char *why,
                          size_t size) {
    return run(e, args, (int)seed, NULL, result, why, size);
}

/* --- in an instance ----------------------------------------------------------------------------------- */

void expression_repr(const char *text, char *out, size_t size) {
    size_t bytes = strlen(text), count = characters(text, bytes);
    if (count <= EXPRESSION_SHOWN_TEXT) {
        native_repr_text(text, out, size);
        return;
    }
    size_t head = 0, tail = bytes;
    for (size_t k = 0; k < 120; ++k) /* the first 120 characters, the last 30: whole UTF-8 sequences */
        do ++head; while (((unsigned char)text[head] & 0xC0) == 0x80);
    for (size_t k = 0; k < 30; ++k)
        do --tail; while (tail > head && ((unsigned char)text[tail] & 0xC0) == 0x80);
    char *joined = malloc(head + (bytes - tail) + 8);
    if (!joined) {
        snprintf(out, size, "(%zu characters)", count);
        return;
    }
    snprintf(joined, head + (bytes - tail) + 8, "%.*s ... %s", (int)head, text, text + tail);
    native_repr_text(joined, out, size > 32 ? size - 32 : size);
    free(joined);
    size_t used = strlen(out);
    snprintf(out + used, size - used, " (%zu characters)", count);
}

static int fail_text(NativeInstance *n, int parameter, const char *problem) {
    char text[4 * EXPRESSION_SHOWN_TEXT + 64];
    expression_repr(n->strings[parameter] ? n->strings[parameter] : "", text, sizeof text);
    return native_fail_text(n, 0, "%s '%s': %s = %s %s", n->cls->name, native_instance_name(n),
                            n->cls->variables[parameter].name, text, problem);
}

int native_user_function(NativeInstance *n, int slot, int parameter, const char *const *names, size_t count,
                         const Expression **found) {
    if (n->texts && n->user_checked[slot] == n->texts) { /* no text written since it matched */
        *found = n->user_functions[slot];
        return 0;
    }
    const char *text = n->strings[parameter] ? n->strings[parameter] : "";
    *found = NULL;
    if (n->user_texts[slot] && !strcmp(n->user_texts[slot], text)) {
        *found = n->user_functions[slot];
        n->user_checked[slot] = n->texts;
        return 0;
    }
    n->user_checked[slot] = 0;
    expression_free(n->user_functions[slot]);
    free(n->user_texts[slot]);
    n->user_functions[slot] = NULL;
    n->user_texts[slot] = NULL;
    const char *start, *end;
    strip(text, &start, &end); /* only whitespace (str.strip's): no user function */
    if (start == end) {
        n->user_checked[slot] = n->texts;
        return 0;
    }
    char why[1600];
    Expression *e = expression_parse(text, names, count, why, sizeof why);
    if (!e) {
        char problem[1700];
        snprintf(problem, sizeof problem, "is invalid: %s", why);
        return fail_text(n, parameter, problem);
    }
    n->user_functions[slot] = e;
    n->user_texts[slot] = strdup(text);
    n->user_checked[slot] = n->user_texts[slot] ? n->texts : 0;
    *found = e;
    return 0;
}

int native_call_user_function(NativeInstance *n, int slot, int parameter, const char *const *names, size_t count,
                              const double *args, const int *order, double *result) {
    const Expression *e;
    if (native_user_function(n, slot, parameter, names, count, &e) != 0) return -1;
    char why[1600];
    if (!e) {
        snprintf(why, sizeof why, "empty expression");
        return fail_text(n, parameter, why);
    }
    if (expression_value_in_order(e, args, order, result, why, sizeof why) != 0) return fail_text(n, parameter, why);
    return 0;
}

void native_forget_user_functions(NativeInstance *n) {
    for (int slot = 0; slot < NATIVE_USER_FUNCTIONS; ++slot) {
        expression_free(n->user_functions[slot]);
        free(n->user_texts[slot]);
        n->user_functions[slot] = NULL;
        n->user_texts[slot] = NULL;
        n->user_checked[slot] = 0;
    }
}
