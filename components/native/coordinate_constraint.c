/* CoordinateConstraint (components/coordinate_constraint.py): the residuals of k*q_b - q_a = off(t) and the cut
 * forces of the constraint force lambda, which a master solves; the warning once when nothing drives lambda. */
#include <math.h>
#include <stdio.h>

#include "expression.h"
#include "model.h"
#include "native_variables.h"

#define V(name) n->values[CoordinateConstraint__##name]
#define OFFSET_FUNCTION 0     /* user-function slots */
#define OFFSET_RATE_FUNCTION 1
#define DRIVEN 0              /* flags: lambda or lambda_rate written after initialization */
#define WARNED 1

static const char *const NAMES[] = {"t", "lOffset", "itemNumber"};

static int parsed(NativeInstance *n, int slot, const Expression **e) {
    int parameter = slot == OFFSET_FUNCTION ? CoordinateConstraint__offsetUserFunction
                                            : CoordinateConstraint__offsetUserFunction_t;
    return native_user_function(n, slot, parameter, NAMES, 3, e);
}

static int evaluate(NativeInstance *n, int slot, double *value) {
    const double args[] = {n->time, V(offset), V(itemNumber)};
    int parameter = slot == OFFSET_FUNCTION ? CoordinateConstraint__offsetUserFunction
                                            : CoordinateConstraint__offsetUserFunction_t;
    return native_call_user_function(n, slot, parameter, NAMES, 3, args, NULL, value);
}

/* d off/dt of offsetUserFunction, exact (the expression's dual numbers) */
static int offset_derivative(NativeInstance *n, const Expression *e, double *value) {
    const double args[] = {n->time, V(offset), V(itemNumber)};
    char why[1600], text[4 * EXPRESSION_SHOWN_TEXT + 64], problem[1800];
    if (expression_derivative(e, args, 0, value, why, sizeof why) == 0) return 0;
    expression_repr(n->strings[CoordinateConstraint__offsetUserFunction], text, sizeof text);
    snprintf(problem, sizeof problem, "has no time derivative here (%s); give offsetUserFunction_t", why);
    return native_fail_text(n, 0, "%s '%s': offsetUserFunction = %s %s", n->cls->name, native_instance_name(n),
                            text, problem);
}

/* (off(t), off_t(t)) at the component's time */
static int offsets(NativeInstance *n, double *position, double *velocity) {
    const Expression *offset_function, *rate_function;
    if (parsed(n, OFFSET_FUNCTION, &offset_function) != 0) return -1;
    if (offset_function) {
        if (evaluate(n, OFFSET_FUNCTION, position) != 0) return -1;
    } else {
        *position = V(offset);
    }
    if (parsed(n, OFFSET_RATE_FUNCTION, &rate_function) != 0) return -1;
    if (rate_function) return evaluate(n, OFFSET_RATE_FUNCTION, velocity);
    if (V(velocityLevel) != 0.0) {
        *velocity = V(offset);
        return 0;
    }
    if (parsed(n, OFFSET_FUNCTION, &offset_function) != 0) return -1;
    if (!offset_function) {
        *velocity = 0.0;
        return 0;
    }
    return offset_derivative(n, offset_function, velocity);
}

int native_CoordinateConstraint_validate(NativeInstance *n) {
    const Expression *e;
    return parsed(n, OFFSET_FUNCTION, &e) != 0 || parsed(n, OFFSET_RATE_FUNCTION, &e) != 0 ? -1 : 0;
}

int native_CoordinateConstraint_initialize(NativeInstance *n) {
    n->state[0] = n->time;
    return 0;
}

int native_CoordinateConstraint_advance(NativeInstance *n, double t, double h) {
    (void)h;
    n->state[0] = t;
    return 0;
}

void native_CoordinateConstraint_written(NativeInstance *n, size_t index) {
    if (n->initialized && (index == CoordinateConstraint__lambda || index == CoordinateConstraint__lambda_rate))
        n->flags[DRIVEN] = 1;
}

int native_CoordinateConstraint_outputs(NativeInstance *n, double *out) {
    const double k = V(factorValue1), rate = V(lambda_rate), lambda = V(lambda);
    const double f = lambda + rate * (n->time - n->state[0]);
    out[0] = V(flange_b_s) - V(flange_a_s);
    out[1] = V(flange_b_v) - V(flange_a_v);
    out[5] = f;
    if (V(activeConnector) == 0.0) {
        out[2] = out[3] = out[4] = lambda;
        out[6] = out[7] = out[8] = out[9] = 0.0;
        return 0;
    }
    double off, off_t;
    if (offsets(n, &off, &off_t) != 0) return -1;
    const double residual = k * V(flange_b_s) - V(flange_a_s) - off;
    const double residual_v = k * V(flange_b_v) - V(flange_a_v) - off_t;
    out[2] = residual;
    out[3] = residual_v;
    out[4] = V(velocityLevel) != 0.0 ? residual_v : residual;
    out[6] = -lambda;
    out[7] = k * lambda;
    out[8] = -rate;
    out[9] = k * rate;
    return 0;
}

int native_CoordinateConstraint_step_warning(NativeInstance *n, char *out, size_t size) {
    if (n->flags[DRIVEN] || n->flags[WARNED] || V(activeConnector) == 0.0) return 0;
    const double *outputs;
    if (native_current_outputs(n, &outputs) != 0) return 0; /* a user function failing here: reading it says so */
    const double residual = outputs[4], tolerance = V(residualTolerance);
    if (!(fabs(residual) > tolerance)) return 0;
    n->flags[WARNED] = 1;
    const char *unit = V(velocityLevel) != 0.0 ? "m/s" : "m";
    char violation[40], time[40], bound[40];
    native_measured(residual, violation, sizeof violation), native_measured(n->time, time, sizeof time);
    native_number(tolerance, bound, sizeof bound);
    snprintf(out, size, "%s '%s': the constraint is violated by %s %s at t = %s s (residualTolerance %s %s) and "
             "its force input lambda has not been driven since initialization. This FMU does not enforce its "
             "constraint: the master must solve lambda (and lambda_rate) at every step so that constraintEquation "
             "= 0, as mechfmu's 'newton' algorithm does; with lambda left at its start value the connected bodies "
             "move unconstrained. (Warned once per instance.)", n->cls->name, native_instance_name(n), violation,
             unit, time, bound, unit);
    return 1;
}

/* the analytic partials: every output on every input it depends on, in CoordinateConstraint.partial_pattern's
 * order (outputs, then their inputs in input order); the outputs are linear in the inputs */
int native_CoordinateConstraint_partials(NativeInstance *n, double *out) {
    const double k = V(factorValue1), active = V(activeConnector) != 0.0, elapsed = n->time - n->state[0];
    const double position = V(velocityLevel) != 0.0 ? 0.0 : 1.0;
    size_t i = 0;
    out[i++] = -1.0, out[i++] = 1.0;                                     /* s_rel: flange_a.s, flange_b.s */
    out[i++] = -1.0, out[i++] = 1.0;                                     /* v_rel: flange_a.v, flange_b.v */
    /* residual and residual_v: flange_a's, flange_b's, lambda (active: k*b - a - offset; else lambda) */
    out[i++] = active ? -1.0 : 0.0, out[i++] = active ? k : 0.0, out[i++] = active ? 0.0 : 1.0;
    out[i++] = active ? -1.0 : 0.0, out[i++] = active ? k : 0.0, out[i++] = active ? 0.0 : 1.0;
    /* constraintEquation: flange_a.s, flange_b.s, flange_a.v, flange_b.v, lambda (residual or residual_v's) */
    out[i++] = active ? -position : 0.0, out[i++] = active ? k * position : 0.0;
    out[i++] = active ? -(1.0 - position) : 0.0, out[i++] = active ? k * (1.0 - position) : 0.0;
    out[i++] = active ? 0.0 : 1.0;
    out[i++] = 1.0, out[i++] = elapsed;                                  /* f: lambda, lambda_rate */
    out[i++] = active ? -1.0 : 0.0, out[i++] = active ? k : 0.0;         /* flange forces: lambda */
    out[i++] = active ? -1.0 : 0.0, out[i++] = active ? k : 0.0;         /* their rates: lambda_rate */
    return 0;
}
