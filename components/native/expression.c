/* User-function expressions (expression.h): a tokenizer and recursive-descent parser for Python's expression
 * grammar (what expressions.py allows, and enough of the rest to name what is not allowed), the same checks in the
 * same order (a breadth-first walk like Python's ast.walk), and an evaluator with Python's float semantics. */
#include "expression.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum Kind {
    K_NUMBER, K_NAME, K_UNARY, K_BINARY, K_BOOL, K_COMPARE, K_IF, K_CALL,
    K_FORBIDDEN, /* a construct expressions.py refuses (text: its ast node name) */
    K_LITERAL    /* a literal that is not a real number (text: its repr) */
};
enum Op { O_ADD, O_SUB, O_MUL, O_DIV, O_FLOORDIV, O_MOD, O_POW, O_NEG, O_POS, O_NOT, O_AND, O_OR,
          O_EQ, O_NE, O_LT, O_LE, O_GT, O_GE };

typedef struct {
    int kind, op;
    int first, count; /* children: Expression.children[first .. first+count) */
    double number;
    int argument;     /* K_NAME: the argument's index, or -1 - constant index (pi, e), or -100 - function */
    int called;       /* K_NAME: the function position of a call */
    char text[128];   /* K_NAME: the name; K_FORBIDDEN, K_LITERAL: what to report */
    char source[64];  /* an Attribute: its dotted name (os.system) */
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

/* --- tokens ------------------------------------------------------------------------------------------ */

enum Token { T_END, T_NUMBER, T_NAME, T_STRING, T_OP, T_BAD };

typedef struct {
    const char *text;
    size_t position, length; /* the current token */
    int token;
    char value[128];         /* the token's text (cut) */
    const char *error;       /* a syntax error */
    size_t error_column;
    Expression *e;
    int capacity, child_capacity;
    int pending[256];        /* children collected for the node being built (a stack) */
    int pending_count;
} Parser;

static int is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static int is_digit(char c) { return c >= '0' && c <= '9'; }

static void next(Parser *p) {
    const char *s = p->text;
    size_t i = p->position + p->length;
    while (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r' || s[i] == '\f' || s[i] == '\\') ++i;
    p->position = i;
    size_t start = i;
    if (!s[i]) {
        p->token = T_END;
    } else if (is_digit(s[i]) || (s[i] == '.' && is_digit(s[i + 1]))) {
        p->token = T_NUMBER;
        while (is_digit(s[i]) || is_name_start(s[i]) || s[i] == '.'
               || ((s[i] == '+' || s[i] == '-') && (s[i - 1] == 'e' || s[i - 1] == 'E') && !(s[start] == '0'
                   && (s[start + 1] == 'x' || s[start + 1] == 'X'))))
            ++i;
    } else if (is_name_start(s[i]) || (unsigned char)s[i] >= 0x80) {
        p->token = T_NAME;
        while (is_name_start(s[i]) || is_digit(s[i]) || (unsigned char)s[i] >= 0x80) ++i;
        if ((s[i] == '\'' || s[i] == '"') && i - start <= 3) { /* a prefixed string: b'', r'', f'' */
            p->token = T_STRING;
        }
    } else if (s[i] == '\'' || s[i] == '"') {
        p->token = T_STRING;
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
        if (p->token == T_BAD) ++i;
    }
    if (p->token == T_STRING) { /* to the closing quote (a backslash escapes) */
        while (s[i] != '\'' && s[i] != '"') ++i;
        char quote = s[i++];
        while (s[i] && s[i] != quote) i += s[i] == '\\' && s[i + 1] ? 2 : 1;
        if (s[i]) ++i;
    }
    p->length = i - start;
    snprintf(p->value, sizeof p->value, "%.*s", (int)(p->length < 127 ? p->length : 127), s + start);
}

static int is_op(const Parser *p, const char *op) { return p->token == T_OP && !strcmp(p->value, op); }
static int is_word(const Parser *p, const char *word) { return p->token == T_NAME && !strcmp(p->value, word); }

static int fail(Parser *p, const char *message) {
    if (!p->error) {
        p->error = message;
        p->error_column = p->position + 1;
    }
    return -1;
}

/* --- nodes ------------------------------------------------------------------------------------------- */

static int node(Parser *p, int kind, int op, int first_pending) {
    Expression *e = p->e;
    if (e->node_count == p->capacity) {
        p->capacity = p->capacity ? 2 * p->capacity : 64;
        Node *grown = realloc(e->nodes, (size_t)p->capacity * sizeof *grown);
        if (!grown) return fail(p, "out of memory");
        e->nodes = grown;
    }
    int count = p->pending_count - first_pending;
    if (e->child_count + count > p->child_capacity) {
        p->child_capacity = 2 * (e->child_count + count) + 64;
        int *grown = realloc(e->children, (size_t)p->child_capacity * sizeof *grown);
        if (!grown) return fail(p, "out of memory");
        e->children = grown;
    }
    Node *n = &e->nodes[e->node_count];
    memset(n, 0, sizeof *n);
    n->kind = kind, n->op = op, n->first = e->child_count, n->count = count;
    memcpy(e->children + e->child_count, p->pending + first_pending, (size_t)count * sizeof(int));
    e->child_count += count;
    p->pending_count = first_pending;
    return e->node_count++;
}

static int push(Parser *p, int index) {
    if (index < 0) return -1;
    if (p->pending_count == (int)(sizeof p->pending / sizeof *p->pending)) return fail(p, "too many nested parentheses");
    p->pending[p->pending_count++] = index;
    return index;
}

static int leaf(Parser *p, int kind, const char *text) {
    int index = node(p, kind, 0, p->pending_count);
    if (index >= 0) snprintf(p->e->nodes[index].text, sizeof p->e->nodes[index].text, "%.127s", text);
    return index;
}

static int expression(Parser *p);

/* Skip a balanced bracket group (the contents of a construct that is refused as a whole). */
static int skip_group(Parser *p, const char *open, const char *close) {
    int depth = 0;
    do {
        if (p->token == T_END) return fail(p, open[0] == '(' ? "'(' was never closed"
                                              : open[0] == '[' ? "'[' was never closed" : "'{' was never closed");
        if (is_op(p, open)) ++depth;
        if (is_op(p, close)) --depth;
        next(p);
    } while (depth > 0);
    return 0;
}

static int literal_number(Parser *p) {
    char clean[EXPRESSION_MAX_LENGTH + 1];
    size_t k = 0;
    for (size_t i = 0; i < p->length && k < sizeof clean - 1; ++i)
        if (p->text[p->position + i] != '_') clean[k++] = p->text[p->position + i];
    clean[k] = '\0';
    size_t n = strlen(clean);
    if (n && (clean[n - 1] == 'j' || clean[n - 1] == 'J')) { /* an imaginary literal */
        char text[48];
        snprintf(text, sizeof text, "%.40s", clean);
        return leaf(p, K_LITERAL, text);
    }
    double value;
    char *end;
    if (clean[0] == '0' && (clean[1] == 'x' || clean[1] == 'X' || clean[1] == 'o' || clean[1] == 'O'
                            || clean[1] == 'b' || clean[1] == 'B')) {
        int base = clean[1] == 'x' || clean[1] == 'X' ? 16 : clean[1] == 'o' || clean[1] == 'O' ? 8 : 2;
        value = (double)strtoull(clean + 2, &end, base);
    } else {
        if (strchr(clean, 'x') || strchr(clean, 'X')) return fail(p, "invalid syntax");
        value = strtod(clean, &end);
        int integer = !strpbrk(clean, ".eE");
        if (integer && n > 1 && clean[0] == '0' && strspn(clean, "0") != n) return fail(p, "invalid syntax");
        if (integer && isinf(value)) {
            char text[96];
            snprintf(text, sizeof text, "literal of %zu digits is beyond the largest real number (1.8e308)", n);
            int index = leaf(p, K_LITERAL, "");
            if (index >= 0) p->e->nodes[index].op = -1; /* the message is the text, not "literal ... is not" */
            if (index >= 0) snprintf(p->e->nodes[index].text, sizeof p->e->nodes[index].text, "%zu", n);
            return index;
        }
    }
    if (*end) return fail(p, "invalid syntax");
    int index = node(p, K_NUMBER, 0, p->pending_count);
    if (index >= 0) p->e->nodes[index].number = value;
    return index;
}

static int atom(Parser *p) {
    if (p->token == T_NUMBER) {
        int index = literal_number(p);
        next(p);
        return index;
    }
    if (p->token == T_STRING) {
        char text[128];
        int formatted = 0;
        snprintf(text, sizeof text, "%.127s", p->value);
        for (const char *c = p->value; *c && *c != '\'' && *c != '"'; ++c) formatted |= *c == 'f' || *c == 'F';
        while (p->token == T_STRING) next(p); /* adjacent strings are one literal */
        return leaf(p, formatted ? K_FORBIDDEN : K_LITERAL, formatted ? "JoinedStr" : text);
    }
    if (is_word(p, "True") || is_word(p, "False") || is_word(p, "None")) {
        int index = leaf(p, K_LITERAL, p->value);
        next(p);
        return index;
    }
    if (is_op(p, "...")) {
        next(p);
        return leaf(p, K_LITERAL, "Ellipsis");
    }
    if (is_word(p, "lambda")) {
        while (p->token != T_END && !is_op(p, ":")) next(p);
        if (p->token == T_END) return fail(p, "invalid syntax");
        next(p);
        if (expression(p) < 0) return -1; /* the body is not walked: Lambda is refused first */
        return leaf(p, K_FORBIDDEN, "Lambda");
    }
    if (p->token == T_NAME) {
        static const char *const keywords[] = {"and", "or", "not", "if", "else", "in", "is", "for", "await", "yield",
                                               "import", "from", "def", "class", "return", "while", "pass", "del"};
        for (size_t k = 0; k < sizeof keywords / sizeof *keywords; ++k)
            if (is_word(p, keywords[k])) return fail(p, "invalid syntax");
        int index = node(p, K_NAME, 0, p->pending_count);
        if (index >= 0) snprintf(p->e->nodes[index].text, sizeof p->e->nodes[index].text, "%.127s", p->value);
        next(p);
        return index;
    }
    if (is_op(p, "(")) {
        next(p);
        if (is_op(p, ")")) {
            next(p);
            return leaf(p, K_FORBIDDEN, "Tuple");
        }
        int inner = expression(p);
        if (inner < 0) return -1;
        if (is_op(p, ":=")) {
            int depth = 1;
            while (depth && p->token != T_END) { /* to the closing parenthesis */
                if (is_op(p, "(")) ++depth;
                if (is_op(p, ")")) --depth;
                next(p);
            }
            if (depth) return fail(p, "'(' was never closed");
            return leaf(p, K_FORBIDDEN, "NamedExpr");
        }
        if (is_word(p, "for")) {
            while (p->token != T_END && !is_op(p, ")")) next(p);
            if (p->token == T_END) return fail(p, "'(' was never closed");
            next(p);
            return leaf(p, K_FORBIDDEN, "GeneratorExp");
        }
        if (is_op(p, ",")) {
            int depth = 1;
            while (depth && p->token != T_END) {
                if (is_op(p, "(")) ++depth;
                if (is_op(p, ")")) --depth;
                next(p);
            }
            if (depth) return fail(p, "'(' was never closed");
            return leaf(p, K_FORBIDDEN, "Tuple");
        }
        if (!is_op(p, ")")) return fail(p, p->token == T_END ? "'(' was never closed" : "invalid syntax");
        next(p); /* the inner expression is the atom itself */
        return inner;
    }
    if (is_op(p, "[")) {
        if (skip_group(p, "[", "]") != 0) return -1;
        return leaf(p, K_FORBIDDEN, "List");
    }
    if (is_op(p, "{")) {
        const char *kind = "Set";
        size_t at = p->position;
        if (skip_group(p, "{", "}") != 0) return -1;
        if (strchr(p->text + at, ':') && strchr(p->text + at, ':') < p->text + p->position) kind = "Dict";
        return leaf(p, K_FORBIDDEN, kind);
    }
    if (p->token == T_END) return fail(p, "invalid syntax");
    return fail(p, "invalid syntax");
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
                } else if (p->token == T_NAME && p->text[p->position + p->length] == '='
                           && p->text[p->position + p->length + 1] != '=') {
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
            next(p);
            int call = node(p, K_CALL, 0, first);
            if (call < 0) return -1;
            p->e->nodes[call].keywords = keywords;
            push(p, call);
        } else if (is_op(p, ".")) {
            next(p);
            if (p->token != T_NAME) return fail(p, "invalid syntax");
            const Node *owner = &p->e->nodes[p->pending[p->pending_count - 1]];
            char dotted[64];
            snprintf(dotted, sizeof dotted, "%.30s.%.30s", owner->kind == K_NAME ? owner->text : owner->source,
                     p->value);
            next(p);
            p->pending_count = first;
            int attribute = leaf(p, K_FORBIDDEN, "Attribute");
            if (attribute >= 0) snprintf(p->e->nodes[attribute].source, sizeof p->e->nodes[attribute].source, "%s",
                                         dotted);
            push(p, attribute);
        } else if (is_op(p, "[")) {
            if (skip_group(p, "[", "]") != 0) return -1;
            p->pending_count = first;
            push(p, leaf(p, K_FORBIDDEN, "Subscript"));
        } else {
            break;
        }
    }
    return p->pending[--p->pending_count];
}

static int unary(Parser *p);

static int power(Parser *p) {
    int first = p->pending_count;
    if (push(p, primary(p)) < 0) return -1;
    if (!is_op(p, "**")) return p->pending[--p->pending_count];
    next(p);
    if (push(p, unary(p)) < 0) return -1;
    return node(p, K_BINARY, O_POW, first);
}

static int unary(Parser *p) {
    if (is_op(p, "-") || is_op(p, "+") || is_op(p, "~")) {
        int op = is_op(p, "-") ? O_NEG : is_op(p, "+") ? O_POS : -1;
        int first = p->pending_count;
        next(p);
        if (push(p, unary(p)) < 0) return -1;
        if (op < 0) {
            p->pending_count = first;
            return leaf(p, K_FORBIDDEN, "Invert");
        }
        return node(p, K_UNARY, op, first);
    }
    return power(p);
}

/* a left-associative level: each operator of `ops` (refused ones named in `forbidden`) */
static int binary_level(Parser *p, int (*operand)(Parser *), const char *const *ops, const int *codes, size_t count) {
    int first = p->pending_count;
    if (push(p, operand(p)) < 0) return -1;
    for (;;) {
        size_t k = 0;
        while (k < count && !is_op(p, ops[k])) ++k;
        if (k == count) break;
        next(p);
        if (push(p, operand(p)) < 0) return -1;
        int made = codes[k] >= 0 ? node(p, K_BINARY, codes[k], first) : -1;
        if (codes[k] < 0) {
            static const char *const names[] = {"MatMult", "BitOr", "BitXor", "BitAnd", "LShift", "RShift"};
            p->pending_count = first;
            made = leaf(p, K_FORBIDDEN, names[-codes[k] - 1]);
        }
        if (push(p, made) < 0) return -1;
    }
    return p->pending[--p->pending_count];
}

static int term(Parser *p) {
    static const char *const ops[] = {"*", "/", "//", "%", "@"};
    static const int codes[] = {O_MUL, O_DIV, O_FLOORDIV, O_MOD, -1};
    return binary_level(p, unary, ops, codes, 5);
}

static int arith(Parser *p) {
    static const char *const ops[] = {"+", "-"};
    static const int codes[] = {O_ADD, O_SUB};
    return binary_level(p, term, ops, codes, 2);
}

static int shift(Parser *p) {
    static const char *const ops[] = {"<<", ">>"};
    static const int codes[] = {-5, -6};
    return binary_level(p, arith, ops, codes, 2);
}

static int bit_and(Parser *p) {
    static const char *const ops[] = {"&"};
    static const int codes[] = {-4};
    return binary_level(p, shift, ops, codes, 1);
}

static int bit_xor(Parser *p) {
    static const char *const ops[] = {"^"};
    static const int codes[] = {-3};
    return binary_level(p, bit_and, ops, codes, 1);
}

static int bit_or(Parser *p) {
    static const char *const ops[] = {"|"};
    static const int codes[] = {-2};
    return binary_level(p, bit_xor, ops, codes, 1);
}

static int comparison(Parser *p) {
    int first = p->pending_count;
    if (push(p, bit_or(p)) < 0) return -1;
    static const char *const ops[] = {"==", "!=", "<", "<=", ">", ">="};
    static const int codes[] = {O_EQ, O_NE, O_LT, O_LE, O_GT, O_GE};
    int operators[128], count = 0;
    const char *refused = NULL;
    for (;;) {
        size_t k = 0;
        while (k < 6 && !is_op(p, ops[k])) ++k;
        if (k < 6) {
            next(p);
        } else if (is_word(p, "in") || is_word(p, "is") || (is_word(p, "not") && !strncmp(
                       p->text + p->position + p->length + strspn(p->text + p->position + p->length, " "), "in", 2))) {
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
        if (count == 128) return fail(p, "invalid syntax");
        operators[count++] = k < 6 ? codes[k] : O_EQ;
        if (push(p, bit_or(p)) < 0) return -1;
    }
    if (!count) return p->pending[--p->pending_count];
    if (refused) {
        p->pending_count = first;
        return leaf(p, K_FORBIDDEN, refused);
    }
    int made = node(p, K_COMPARE, 0, first);
    if (made < 0) return -1;
    /* the operators follow the operands in the children list: left, comparators..., then the operator codes */
    int *grown = realloc(p->e->children, (size_t)(p->e->child_count + count) * sizeof(int));
    if (!grown) return fail(p, "out of memory");
    p->e->children = grown;
    p->child_capacity = p->e->child_count + count;
    for (int i = 0; i < count; ++i) p->e->children[p->e->child_count++] = -1000 - operators[i];
    Node *n = &p->e->nodes[made];
    n->op = count; /* the number of operators */
    return made;
}

static int not_test(Parser *p) {
    if (is_word(p, "not")) {
        int first = p->pending_count;
        next(p);
        if (push(p, not_test(p)) < 0) return -1;
        return node(p, K_UNARY, O_NOT, first);
    }
    return comparison(p);
}

static int bool_level(Parser *p, const char *word, int op, int (*operand)(Parser *)) {
    int first = p->pending_count;
    if (push(p, operand(p)) < 0) return -1;
    int count = 1;
    while (is_word(p, word)) {
        next(p);
        if (push(p, operand(p)) < 0) return -1;
        ++count;
    }
    if (count == 1) return p->pending[--p->pending_count];
    return node(p, K_BOOL, op, first);
}

static int and_test(Parser *p) { return bool_level(p, "and", O_AND, not_test); }
static int or_test(Parser *p) { return bool_level(p, "or", O_OR, and_test); }

static int expression(Parser *p) {
    if (p->error) return -1;
    int first = p->pending_count;
    if (push(p, or_test(p)) < 0) return -1;
    if (!is_word(p, "if")) return p->pending[--p->pending_count];
    next(p);
    if (push(p, or_test(p)) < 0) return -1;
    if (!is_word(p, "else")) return fail(p, "expected 'else' after 'if' expression");
    next(p);
    if (push(p, expression(p)) < 0) return -1;
    /* Python's IfExp fields: test, body, orelse (the body was parsed first) */
    int body = p->pending[first], test = p->pending[first + 1];
    p->pending[first] = test, p->pending[first + 1] = body;
    return node(p, K_IF, 0, first);
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

static int children_of(const Expression *e, int index, int *out) {
    const Node *n = &e->nodes[index];
    for (int i = 0; i < n->count; ++i) out[i] = e->children[n->first + i];
    return n->count;
}

static void join_names(char *out, size_t size, const char *const *names, size_t count, const char *const *more,
                       size_t more_count) {
    size_t used = 0;
    out[0] = '\0';
    for (size_t i = 0; i < count + more_count && used < size; ++i)
        used += (size_t)snprintf(out + used, size - used, "%s%s", i ? ", " : "", i < count ? names[i]
                                                                                         : more[i - count]);
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
    while (head < tail) {
        int index = queue[head++];
        weight += node_weight(e, index);
        int children[512];
        int count = children_of(e, index, children);
        for (int i = 0; i < count; ++i) queue[tail++] = children[i];
    }
    int problem = 0;
    if (weight > EXPRESSION_MAX_NODES) {
        snprintf(why, size, "expression has more than %d syntax nodes", EXPRESSION_MAX_NODES);
        problem = 1;
    }
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
                snprintf(why, size, "call of '%s' is not allowed; allowed functions: %s",
                         function->kind == K_NAME ? function->text : function->source[0] ? function->source
                                                                                           : "an expression", list);
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
    /* literals that are not real numbers: depth first, as the literal pass of expressions.py visits them */
    for (int i = 0; i < e->node_count && !problem; ++i) { /* nodes were made children first: depth-first order */
        const Node *n = &e->nodes[i];
        if (n->kind != K_LITERAL) continue;
        if (n->op == -1)
            snprintf(why, size, "literal of %s digits is beyond the largest real number (1.8e308)", n->text);
        else
            snprintf(why, size, "literal %s is not a real number", n->text);
        problem = 1;
    }
    free(queue);
    free(called);
    return problem ? -1 : 0;
}

Expression *expression_parse(const char *text, const char *const *names, size_t count, char *why, size_t size) {
    size_t length = strlen(text);
    const char *start = text;
    while (*start == ' ' || *start == '\t' || *start == '\n' || *start == '\r') ++start;
    if (!*start) {
        snprintf(why, size, "empty expression");
        return NULL;
    }
    if (length > EXPRESSION_MAX_LENGTH) {
        snprintf(why, size, "expression longer than %d characters", EXPRESSION_MAX_LENGTH);
        return NULL;
    }
    Expression *e = calloc(1, sizeof *e);
    if (!e) return NULL;
    e->argument_count = count;
    e->names = calloc(count + 1, sizeof *e->names);
    for (size_t i = 0; e->names && i < count; ++i) e->names[i] = strdup(names[i]);
    Parser p = {.text = start, .e = e};
    next(&p);
    e->root = expression(&p);
    if (!p.error && p.token != T_END) fail(&p, "invalid syntax");
    if (p.error) {
        snprintf(why, size, "syntax error at column %zu: %s", p.error_column, p.error);
        expression_free(e);
        return NULL;
    }
    if (check(e, why, size) != 0) {
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
    double mod = fmod(x, y);
    if (mod) {
        if ((y < 0) != (mod < 0)) mod += y;
    } else {
        mod = copysign(0.0, y);
    }
    *out = mod;
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

static int call(Run *r, const Node *n, Value *out) {
    const Expression *e = r->e;
    const Node *function = &e->nodes[e->children[n->first]];
    const char *name = function->text;
    int given = n->count - 1;
    Value args[256];
    if (given > 256) return error(r, "too many arguments");
    for (int i = 0; i < given; ++i)
        if (evaluate(r, e->children[n->first + 1 + i], &args[i]) != 0) return -1;
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
        char repr[40];
        native_repr(args[i], repr, sizeof repr);
        used += (size_t)snprintf(out + used, size - used, "%s%s=%s", k ? ", " : "", e->names[i], repr);
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

static int fail_text(NativeInstance *n, int parameter, const char *problem) {
    char text[EXPRESSION_MAX_LENGTH * 4 + 8];
    native_repr_text(n->strings[parameter], text, sizeof text);
    return native_fail_text(n, 0, "%s '%s': %s = %s %s", n->cls->name, native_instance_name(n),
                            n->cls->variables[parameter].name, text, problem);
}

int native_user_function(NativeInstance *n, int slot, int parameter, const char *const *names, size_t count,
                         const Expression **found) {
    const char *text = n->strings[parameter] ? n->strings[parameter] : "";
    *found = NULL;
    if (n->user_texts[slot] && !strcmp(n->user_texts[slot], text)) {
        *found = n->user_functions[slot];
        return 0;
    }
    expression_free(n->user_functions[slot]);
    free(n->user_texts[slot]);
    n->user_functions[slot] = NULL;
    n->user_texts[slot] = NULL;
    const char *start = text;
    while (*start == ' ' || *start == '\t' || *start == '\n' || *start == '\r') ++start;
    if (!*start) return 0;
    char why[1600];
    Expression *e = expression_parse(text, names, count, why, sizeof why);
    if (!e) {
        char problem[1700];
        snprintf(problem, sizeof problem, "is invalid: %s", why);
        return fail_text(n, parameter, problem);
    }
    n->user_functions[slot] = e;
    n->user_texts[slot] = strdup(text);
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
    }
}
