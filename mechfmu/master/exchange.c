/*
 * The master's exchange with its FMUs, compiled: a program of FMI 2.0 calls (batched fmi2GetReal/fmi2SetReal, the
 * values passed from outputs to inputs with each connection's factor and offset, fmi2DoStep, and Model Exchange's
 * fmi2SetTime, fmi2SetContinuousStates, fmi2GetDerivatives, fmi2GetEventIndicators, fmi2CompletedIntegratorStep,
 * and the FMU states' get, set and free) run in one call from the
 * Python master (mechfmu/master/exchange.py), so a step costs the FMUs' work and not one Python call per FMI call.
 *
 * Invariant: each FMU gets the FMI calls the Python master makes it, in the same order, with the same arguments
 * (the program may interleave them across FMUs, whose calls do not touch one another), and factor*v + offset is
 * rounded as Python rounds it (compiled with -ffp-contract=off): the results are the same bits.
 */
#include <stdint.h>

#include "fmi2Functions.h"

#if defined(_WIN32)
#define EXPORT __declspec(dllexport)
#else
#define EXPORT __attribute__((visibility("default")))
#endif

/* One FMU instance and its functions (NULL where the interface lacks one). */
typedef struct {
    fmi2Component component;
    fmi2GetRealTYPE *getReal;
    fmi2SetRealTYPE *setReal;
    fmi2DoStepTYPE *doStep;
    fmi2SetTimeTYPE *setTime;
    fmi2SetContinuousStatesTYPE *setContinuousStates;
    fmi2GetDerivativesTYPE *getDerivatives;
    fmi2GetEventIndicatorsTYPE *getEventIndicators;
    fmi2GetFMUstateTYPE *getFMUstate;
    fmi2SetFMUstateTYPE *setFMUstate;
    fmi2FreeFMUstateTYPE *freeFMUstate;
    fmi2CompletedIntegratorStepTYPE *completedIntegratorStep;
} Unit;

/* An operation: its code, its unit, a count and two offsets (their meaning per code). */
typedef struct {
    int64_t code, unit, count, a, b;
} Operation;

enum {
    GET_REALS,       /* getReal(refs + a, count) -> values + b */
    SET_REALS,       /* setReal(refs + a, count) <- values + b */
    PASS,            /* values[b + i] = values[source[a + i]], times factor[a + i] plus offset[a + i] where mapped */
    SET_TIME,        /* setTime(time) */
    SET_STATES,      /* setContinuousStates(states + a, count) */
    GET_DERIVATIVES, /* getDerivatives -> derivatives + a */
    GET_INDICATORS,  /* getEventIndicators -> indicators + a */
    DO_STEP,         /* doStep(time, step, fmi2True) */
    GET_STATE,       /* getFMUstate -> handles[a] */
    SET_STATE,       /* setFMUstate(handles[a]) */
    FREE_STATE,      /* freeFMUstate(handles + a) */
    COMPLETED_STEP,  /* completedIntegratorStep(fmi2True, ...): its requests are left to event mode's checks */
    STEP_FROM        /* doStep(values[b], time - values[b], fmi2True) where time > values[b] */
};

/* The arrays a program works on; the master owns them. */
typedef struct {
    const fmi2ValueReference *refs;
    const int64_t *source;
    const double *factor, *offset;
    const unsigned char *mapped;
    double *values;
} Tables;

/*
 * Run ``operations`` in order. Returns -1 when every call returned fmi2OK or fmi2Warning, else the index of the
 * first operation whose call returned more (its status in *status): the program stops there, as the Python master
 * stops at the first failed call.
 */
EXPORT int64_t exchange_run(const Unit *units, const Operation *operations, int64_t count, const Tables *tables,
                            double time, double step, const double *states, double *derivatives, double *indicators,
                            fmi2FMUstate *handles, int *status) {
    for (int64_t k = 0; k < count; ++k) {
        const Operation *op = &operations[k];
        const Unit *unit = &units[op->unit];
#if defined(__GNUC__) /* the instance a few calls ahead, on its way into the cache (a hint: never a fault) */
        if (k + 4 < count) __builtin_prefetch(units[operations[k + 4].unit].component);
#endif
        fmi2Status result = fmi2OK;
        switch (op->code) {
        case GET_REALS:
            result = unit->getReal(unit->component, tables->refs + op->a, (size_t)op->count, tables->values + op->b);
            break;
        case SET_REALS:
            result = unit->setReal(unit->component, tables->refs + op->a, (size_t)op->count, tables->values + op->b);
            break;
        case PASS:
            for (int64_t i = 0; i < op->count; ++i) {
                double value = tables->values[tables->source[op->a + i]];
                if (tables->mapped[op->a + i]) {
                    value = tables->factor[op->a + i] * value + tables->offset[op->a + i];
                }
                tables->values[op->b + i] = value;
            }
            break;
        case SET_TIME:
            result = unit->setTime(unit->component, time);
            break;
        case SET_STATES:
            result = unit->setContinuousStates(unit->component, states + op->a, (size_t)op->count);
            break;
        case GET_DERIVATIVES:
            result = unit->getDerivatives(unit->component, derivatives + op->a, (size_t)op->count);
            break;
        case GET_INDICATORS:
            result = unit->getEventIndicators(unit->component, indicators + op->a, (size_t)op->count);
            break;
        case DO_STEP:
            result = unit->doStep(unit->component, time, step, fmi2True);
            break;
        case GET_STATE:
            result = unit->getFMUstate(unit->component, &handles[op->a]);
            break;
        case SET_STATE:
            result = unit->setFMUstate(unit->component, handles[op->a]);
            break;
        case FREE_STATE:
            result = unit->freeFMUstate(unit->component, &handles[op->a]);
            break;
        case COMPLETED_STEP: {
            fmi2Boolean enter_event_mode = fmi2False, terminate = fmi2False;
            result = unit->completedIntegratorStep(unit->component, fmi2True, &enter_event_mode, &terminate);
            break;
        }
        case STEP_FROM:
            if (time > tables->values[op->b]) {
                result = unit->doStep(unit->component, tables->values[op->b], time - tables->values[op->b], fmi2True);
            }
            break;
        default:
            result = fmi2Fatal;
        }
        if (result > fmi2Warning) {
            *status = (int)result;
            return k;
        }
    }
    return -1;
}
