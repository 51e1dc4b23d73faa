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
 *
 * The time in each call (the FMU profile, mechfmu/master/fmu_profile.py) is read from the processor's counter
 * (x86: the time-stamp counter, AArch64: the virtual counter; elsewhere CLOCK_MONOTONIC, on Windows the performance
 * counter), which the master calibrates against CLOCK_MONOTONIC (``exchange_clock``). The read after each call
 * (it ends one and starts the next) costs tens of ns with what it holds up, as much as a call of a small FMU, so a
 * program times one run in ``period`` on average (runs picked at random, so that no periodic work of an FMU is
 * always or never seen): every run's whole time is read (two reads a run), and after each timed run ``period`` is
 * set to what keeps the timed runs' extra time within ``budget`` of the program's own time (1, every run timed,
 * where calls take long).
 */
#include <stdint.h>

#include "fmi2Functions.h"

#if defined(_WIN32)
#define EXPORT __declspec(dllexport)
#include <windows.h>
#else
#define EXPORT __attribute__((visibility("default")))
#include <time.h>
#endif
#if defined(__x86_64__) || defined(__i386__) || defined(_M_X64) || defined(_M_IX86)
#if defined(_MSC_VER)
#include <intrin.h>
#else
#include <x86intrin.h>
#endif
#define COUNTER() ((int64_t)__rdtsc())
#elif defined(__aarch64__)
static inline int64_t virtual_counter(void) {
    uint64_t value;
    __asm__ __volatile__("mrs %0, cntvct_el0" : "=r"(value));
    return (int64_t)value;
}
#define COUNTER() virtual_counter()
#else
#define COUNTER() monotonic_ns()
#endif

/* CLOCK_MONOTONIC in ns (Windows: the performance counter, in ns). */
static int64_t monotonic_ns(void) {
#if defined(_WIN32)
    LARGE_INTEGER count, frequency;
    QueryPerformanceCounter(&count);
    QueryPerformanceFrequency(&frequency);
    return (int64_t)((double)count.QuadPart * 1e9 / (double)frequency.QuadPart);
#else
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
#endif
}

/* The counter and CLOCK_MONOTONIC [ns] read now, one right after the other (the master's calibration). */
EXPORT void exchange_clock(int64_t *counter, int64_t *ns) {
    *counter = COUNTER();
    *ns = monotonic_ns();
    *counter = (*counter + COUNTER()) / 2;
}

/* What reading the counter costs: the fewest ticks between two reads one right after the other (what a timed call
 * measures beyond its own time, subtracted from each), and the mean ticks per read (what timing a call costs). */
EXPORT void exchange_counter_cost(int64_t *overhead, double *read) {
    int64_t fewest = INT64_MAX, first = COUNTER(), last = first;
    for (int k = 0; k < 1000; ++k) {
        int64_t a = COUNTER(), b = COUNTER();
        fewest = b - a < fewest ? b - a : fewest;
        last = b;
    }
    *overhead = fewest;
    *read = (double)(last - first) / 2000.0;
}

/* An FMU's functions (NULL where the interface lacks one): one table for all instances of a binary. */
typedef struct {
    fmi2GetRealTYPE *getReal;
    fmi2SetRealTYPE *setReal;
    fmi2SetTimeTYPE *setTime;
    fmi2SetContinuousStatesTYPE *setContinuousStates;
    fmi2GetDerivativesTYPE *getDerivatives;
    fmi2GetEventIndicatorsTYPE *getEventIndicators;
    fmi2DoStepTYPE *doStep;
    fmi2GetFMUstateTYPE *getFMUstate;
    fmi2SetFMUstateTYPE *setFMUstate;
    fmi2FreeFMUstateTYPE *freeFMUstate;
    fmi2CompletedIntegratorStepTYPE *completedIntegratorStep;
} Functions;

/* One FMU instance and its functions (16 bytes: a program over thousands of FMUs stays in the cache). */
typedef struct {
    fmi2Component component;
    const Functions *f;
} Unit;

/* An operation: its code, its unit, a count and two offsets (their meaning per code). */
typedef struct {
    int32_t code, unit, count, a, b;
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
    STEP_FROM,       /* doStep(values[b], time - values[b], fmi2True) where time > values[b] */
    READ_REALS       /* with a Reading: getReal(its refs + a, count) -> its values + b, else nothing */
};

/* A program's timing: what it measured, and when it times a run next. */
typedef struct {
    double *ticks;     /* per operation: the counter's ticks in its calls in the timed runs, less ``overhead`` each,
                          each run's times the runs it stands for (``weight``) */
    double *run;       /* per operation: the same in the run being timed (zero between runs) */
    int64_t runs;      /* runs made */
    int64_t timed;     /* runs timed */
    int64_t countdown; /* runs until the next timed one (1: the next run) */
    int64_t elapsed;   /* ticks of the timed runs, whole, with their bookkeeping here */
    int64_t untimed;   /* ticks of the other runs, whole */
    int64_t calls;     /* calls timed */
    int64_t usual;     /* ticks of the timed runs after the first that stood for ``weight`` runs, whole (what a
                          timed run is compared with before there is an untimed one) */
    int64_t usuals;    /* how many */
    int64_t overhead;  /* exchange_counter_cost's fewest ticks between two reads */
    double read;       /* exchange_counter_cost's ticks per read */
    double budget;     /* the share of the program's own time (its untimed runs') that timing may add */
    double weight;     /* the runs the next timed run stands for: 1 for the first (always timed), else the period;
                          a run over twice as long as an untimed one and its reads' cost (held up: another process,
                          an interrupt, or a rare long call) stands for itself alone */
    double weights;    /* the timed runs' weights, summed (about ``runs``) */
    uint64_t random;   /* the state of the generator that picks the timed runs (xorshift64, never 0) */
} Clock;

/* The arrays a program works on; the master owns them. */
typedef struct {
    const fmi2ValueReference *refs;
    const int32_t *source;
    const double *factor, *offset;
    const unsigned char *mapped;
    double *values;
    Clock *clock; /* the program's timing (NULL: none) */
} Tables;

/* A recorded step's reads made inside its program (READ_REALS, each right after the last call its unit gets there,
 * while its instance is in the cache): the reader's tables, the count of logged messages, and what the reads met:
 * the first that failed (its operation, -1: none; the reads after it are not made) with its status, and the
 * messages logged during the reads. A failed read does not stop the program. */
typedef struct {
    const Tables *tables;
    const volatile int64_t *logged;
    int64_t failed;
    int status;
    int64_t messages;
} Reading;

/*
 * Run ``operations`` in order, ``timed``: the ticks from each call's start (the end of the one before it: the
 * values passed on to it and a few ns of this loop included) to its end added to ``ticks``. Returns -1 when
 * every call returned fmi2OK or fmi2Warning, else the index of the first operation whose call returned more (its
 * status in *status): the program stops there, as the Python master stops at the first failed call.
 */
static inline int64_t execute(const Unit *units, const Operation *operations, int64_t count, const Tables *tables,
                              double time, double step, const double *states, double *derivatives,
                              double *indicators, fmi2FMUstate *handles, int *status, double *ticks,
                              int64_t overhead, int64_t *calls, const int timed, Reading *reading) {
    int64_t last = timed ? COUNTER() : 0;
    for (int64_t k = 0; k < count; ++k) {
        const Operation *op = &operations[k];
        const Unit *unit = &units[op->unit];
#if defined(__GNUC__) /* the instance a few calls ahead, on its way into the cache (a hint: never a fault) */
        if (k + 4 < count) __builtin_prefetch(units[operations[k + 4].unit].component);
#endif
        fmi2Status result = fmi2OK;
        switch (op->code) {
        case GET_REALS:
            result = unit->f->getReal(unit->component, tables->refs + op->a, (size_t)op->count, tables->values + op->b);
            break;
        case SET_REALS:
            result = unit->f->setReal(unit->component, tables->refs + op->a, (size_t)op->count, tables->values + op->b);
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
            result = unit->f->setTime(unit->component, time);
            break;
        case SET_STATES:
            result = unit->f->setContinuousStates(unit->component, states + op->a, (size_t)op->count);
            break;
        case GET_DERIVATIVES:
            result = unit->f->getDerivatives(unit->component, derivatives + op->a, (size_t)op->count);
            break;
        case GET_INDICATORS:
            result = unit->f->getEventIndicators(unit->component, indicators + op->a, (size_t)op->count);
            break;
        case DO_STEP:
            result = unit->f->doStep(unit->component, time, step, fmi2True);
            break;
        case GET_STATE:
            result = unit->f->getFMUstate(unit->component, &handles[op->a]);
            break;
        case SET_STATE:
            result = unit->f->setFMUstate(unit->component, handles[op->a]);
            break;
        case FREE_STATE:
            result = unit->f->freeFMUstate(unit->component, &handles[op->a]);
            break;
        case COMPLETED_STEP: {
            fmi2Boolean enter_event_mode = fmi2False, terminate = fmi2False;
            result = unit->f->completedIntegratorStep(unit->component, fmi2True, &enter_event_mode, &terminate);
            break;
        }
        case STEP_FROM:
            if (time > tables->values[op->b]) {
                const double from = tables->values[op->b];
                result = unit->f->doStep(unit->component, from, time - from, fmi2True);
            }
            break;
        case READ_REALS:
            if (reading != NULL && reading->failed < 0) {
                const int64_t before = *reading->logged;
                fmi2Status read = unit->f->getReal(unit->component, reading->tables->refs + op->a, (size_t)op->count,
                                                   reading->tables->values + op->b);
                reading->messages += *reading->logged - before;
                if (read > fmi2Warning) {
                    reading->failed = k;
                    reading->status = (int)read;
                }
            }
            break;
        default:
            result = fmi2Fatal;
        }
        if (timed && op->code != PASS && (op->code != READ_REALS || reading != NULL)) {
            /* since the last call's end: this call, and passing its values on */
            int64_t now = COUNTER();
            ticks[k] += (double)(now - last - overhead);
            last = now;
            ++*calls;
        }
        if (result > fmi2Warning) {
            *status = (int)result;
            return k;
        }
    }
    return -1;
}

/*
 * ``execute``, timed where the program's ``clock`` (NULL: never) says this run is: then the next timed run is drawn,
 * on average ``period`` runs on, the period at which timing adds ``budget`` of the program's own time: a timed run's
 * extra time is what it takes beyond an untimed one (before there is one: four times its reads' own cost), over an
 * untimed run's time (so all programs together add ``budget`` of the time in the compiled exchange at most).
 */
static int64_t run_program(const Unit *units, const Operation *operations, int64_t count, const Tables *tables,
                           double time, double step, const double *states, double *derivatives, double *indicators,
                           fmi2FMUstate *handles, int *status, Reading *reading) {
    Clock *clock = tables->clock;
    if (clock == NULL) {
        return execute(units, operations, count, tables, time, step, states, derivatives, indicators, handles, status,
                       NULL, 0, NULL, 0, reading);
    }
    int64_t calls = clock->calls, begin = COUNTER(), failed;
    clock->runs += 1;
    if (--clock->countdown > 0) {
        failed = execute(units, operations, count, tables, time, step, states, derivatives, indicators, handles,
                         status, NULL, 0, NULL, 0, reading);
        clock->untimed += COUNTER() - begin;
        return failed;
    }
    failed = execute(units, operations, count, tables, time, step, states, derivatives, indicators, handles, status,
                     clock->run, clock->overhead, &clock->calls, 1, reading);
    int64_t end = COUNTER(), others = clock->runs - clock->timed - 1; /* the runs not timed so far */
    double reads = clock->read * (double)(clock->calls - calls + 3), plain = 0;
    int usual = clock->timed > 0 && (clock->usuals == 0 || (end - begin) * clock->usuals <= 2 * clock->usual);
    if (others) { /* within twice an untimed run's time and what its reads may add */
        plain = (double)clock->untimed / (double)others;
        usual = clock->timed > 0 && (double)(end - begin) <= 2 * (plain + 4 * reads);
    }
    double weight = usual ? clock->weight : 1;
    for (int64_t k = 0; k < count; ++k) {
        clock->ticks[k] += weight * clock->run[k];
        clock->run[k] = 0;
    }
    if (usual) {
        clock->usual += end - begin;
        clock->usuals += 1;
    }
    clock->elapsed += end - begin;
    clock->timed += 1;
    clock->weights += weight;
    double extra = others ? (double)clock->elapsed / (double)clock->timed - plain : 4 * reads;
    double own = others ? plain : (double)(end - begin) - 4 * reads;
    extra = extra < reads ? reads : extra;
    double period = own > 0 ? extra / (clock->budget * own) : 1e6;
    period = period < 1 ? 1 : period > 1e6 ? 1e6 : period;
    uint64_t x = clock->random;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    clock->random = x;
    int64_t span = 2 * (int64_t)(period + 0.5) - 1; /* 1 .. span: period on average */
    clock->countdown = 1 + (int64_t)(x % (uint64_t)span);
    clock->weight = (double)(span + 1) / 2;
    clock->elapsed += COUNTER() - end; /* this bookkeeping is the timing's cost too */
    return failed;
}

/* One run of a program, its READ_REALS left out (the master's own runs). */
EXPORT int64_t exchange_run(const Unit *units, const Operation *operations, int64_t count, const Tables *tables,
                            double time, double step, const double *states, double *derivatives, double *indicators,
                            fmi2FMUstate *handles, int *status) {
    return run_program(units, operations, count, tables, time, step, states, derivatives, indicators, handles, status,
                       NULL);
}

/*
 * Fixed steps ``first`` .. ``first + count - 1`` of a run of ``steps`` steps of ``h`` from ``start`` to ``stop``, as
 * the master's loop takes them one by one: step n runs ``program`` (``steps_``: its units, operations, count and
 * tables) at t = start + n h over t_next - t, t_next = start + (n + 1) h (the last step's: at most ``stop``); with
 * ``states`` (``state_count`` per step, row k for step first + k) it runs instead at the step's end t + (t_next - t),
 * over 0, with row k as its states (the monolithic master's accepted points). After a recorded step (each
 * ``every``-th and the last) the ``reader`` program (``reads_``) reads the outputs and its ``width`` values go,
 * after t_next, into the next row of ``rows`` (``room`` rows of 1 + width: a recorded step without room for its row
 * ends the block before it runs). Returns the steps completed;
 * ``outcome[0]`` the rows written, ``outcome[1]`` why it stopped before ``count``: -1 not, -2 a row beyond
 * ``bound`` in magnitude or not finite (written, its step completed), -3 a message logged during a step's program,
 * -4 a read that failed (the index of its failed operation in ``outcome[3]``, its status in *status) or logged a
 * message (``outcome[3]`` -1) (that step run and, for -4, its values read but not written; the count of ``logged``
 * before that program in ``outcome[2]``), else the index of the failed operation of the step's program (its status
 * in *status; that step not completed). ``logged`` counts the messages the FMUs log (the master's logger adds to
 * it). With ``read_count`` -1 the reads are the step program's READ_REALS into ``read_tables`` (``read_units`` and
 * ``read_operations`` unused), made in the recorded steps only: a step's messages are then those its reads did
 * not log; a failed read's index in ``outcome[3]`` is that of the step program's operation (for -3 too: the reads
 * after it were not made).
 */
EXPORT int64_t exchange_steps(const Unit *step_units, const Operation *step_operations, int64_t step_count,
                              const Tables *step_tables, const Unit *read_units, const Operation *read_operations,
                              int64_t read_count, const Tables *read_tables, double start, double h, double stop,
                              int64_t first, int64_t count, int64_t steps, int64_t every, double bound, double *rows,
                              int64_t room, int64_t width, const double *states, int64_t state_count,
                              const volatile int64_t *logged, int64_t *outcome, int *status) {
    outcome[0] = 0;
    outcome[1] = -1;
    outcome[2] = *logged;
    outcome[3] = -1;
    if (every < 1 || width < 0 || count < 0 || state_count < 0 || room < 0) {
        *status = (int)fmi2Fatal;
        outcome[1] = 0;
        return 0;
    }
    for (int64_t k = 0; k < count; ++k) {
        int64_t n = first + k;
        double t = start + (double)n * h, t_next = start + (double)(n + 1) * h;
        if (n == steps - 1 && stop < t_next) {
            t_next = stop;
        }
        int recorded = !((n + 1) % every && n + 1 < steps);
        if (recorded && outcome[0] >= room) { /* no room for its row: the block ends before this step */
            return k;
        }
        int64_t mark = *logged;
        Reading reading = {read_tables, logged, -1, 0, 0};
        Reading *reads = read_count < 0 && recorded ? &reading : NULL;
        int64_t failed = states != NULL
                             ? run_program(step_units, step_operations, step_count, step_tables, t + (t_next - t), 0.0,
                                           states + k * state_count, NULL, NULL, NULL, status, reads)
                             : run_program(step_units, step_operations, step_count, step_tables, t, t_next - t, NULL,
                                           NULL, NULL, NULL, status, reads);
        if (failed >= 0) {
            outcome[1] = failed;
            return k;
        }
        if (*logged - mark != reading.messages) {
            outcome[1] = -3;
            outcome[2] = mark;
            outcome[3] = reading.failed;
            return k;
        }
        if (!recorded) {
            continue;
        }
        if (read_count < 0) {
            failed = reading.failed;
            *status = reading.status;
        } else {
            mark = *logged;
            failed = exchange_run(read_units, read_operations, read_count, read_tables, 0.0, 0.0, NULL, NULL, NULL,
                                  NULL, status);
        }
        if (failed >= 0 || *logged != mark) {
            outcome[1] = -4;
            outcome[2] = mark;
            outcome[3] = failed;
            return k;
        }
        double *row = rows + outcome[0] * (1 + width);
        const double *values = read_tables->values;
        int within = 1;
        row[0] = t_next;
        for (int64_t i = 0; i < width; ++i) {
            row[1 + i] = values[i];
            within &= values[i] >= -bound && values[i] <= bound;
        }
        outcome[0] += 1;
        if (!within) {
            outcome[1] = -2;
            return k + 1;
        }
    }
    return count;
}
