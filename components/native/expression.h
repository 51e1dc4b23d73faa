/* User-function expressions in C (components/expressions.py and components/dual.py): the same grammar
 * (docs/components.md#user-functions), limits,
 * checks and arithmetic (Python's float semantics: division, floor division and modulo, ** with its errors, the
 * math functions' domain and range errors), so a valid expression gives the same bits, and its derivative by the
 * same forward-mode rules. Where the C evaluator differs from Python it refuses: a negative number to a fractional
 * power (Python computes a complex number) and the exact wording of some syntax errors. */
#ifndef MECHFMU_NATIVE_EXPRESSION_H
#define MECHFMU_NATIVE_EXPRESSION_H

#include <stddef.h>

#include "model.h"

#define EXPRESSION_MAX_LENGTH 2000   /* characters (code points) of the text */
#define EXPRESSION_MAX_NODES 400     /* syntax nodes, as Python's ast.walk counts them */
#define EXPRESSION_MAX_BRACKETS 200  /* brackets open at once (Python's tokenizer: "too many nested parentheses") */
#define EXPRESSION_SHOWN_NAME 60     /* a longer name is abbreviated in messages (first 40 ... last 10) */
#define EXPRESSION_SHOWN_TEXT 160    /* a longer expression is abbreviated where a message quotes it */

typedef struct Expression Expression;

/* `text` over the argument `names`: the parsed expression, or NULL with `why` (expressions.py's words). */
Expression *expression_parse(const char *text, const char *const *names, size_t count, char *why, size_t size);
void expression_free(Expression *e);
/* The value at `args` (one per name): 0, or -1 with `why` = "evaluation failed (<Python's error>) for t=..." or
 * "result is not finite for ...". */
int expression_value(const Expression *e, const double *args, double *result, char *why, size_t size);
/* expression_value, an error listing the arguments in `order` (indices; NULL: the names' order) */
int expression_value_in_order(const Expression *e, const double *args, const int *order, double *result, char *why,
                              size_t size);
/* The derivative with respect to argument `seed` at `args` (dual.py's rules); errors as expression_value. */
int expression_derivative(const Expression *e, const double *args, size_t seed, double *result, char *why,
                          size_t size);

/* The expression a String parameter holds, parsed once per text and kept in the instance (slot 0..3); NULL for an
 * empty text with *found = 0. -1 after native_fail ("<Class> '<inst>': <param> = '<text>' is invalid: ..."). */
int native_user_function(NativeInstance *n, int slot, int parameter, const char *const *names, size_t count,
                         const Expression **found);
/* Evaluate it (component base.call_expression): -1 after native_fail naming the parameter. An error lists the
 * arguments in `order` (indices into names: the order the Python component passes them), NULL: names' order. */
int native_call_user_function(NativeInstance *n, int slot, int parameter, const char *const *names, size_t count,
                              const double *args, const int *order, double *result);
/* an expression as messages quote it: its repr up to EXPRESSION_SHOWN_TEXT characters; a longer one as the repr of
 * its first 120 and last 30 characters joined by " ... ", then "(N characters)", so the reason after it is kept */
void expression_repr(const char *text, char *out, size_t size);

/* Release the instance's parsed user functions (the runtime, when it frees an instance). */
void native_forget_user_functions(NativeInstance *n);

#endif
