/* The host library's calls for a master's compiled exchange (components/native/runtime.c, the host library's
 * section), from several threads at once: each thread makes its own instances and calls them as the compiled
 * exchange does, with the FMI 2.0 signatures (host_get_real, host_set_real, host_do_step, host_set_time,
 * host_set_continuous_states, host_get_derivatives, host_get_event_indicators, host_completed_integrator_step,
 * host_get_fmu_state, host_set_fmu_state, host_free_fmu_state),
 * refused calls included (they return an error, as an FMI function does); every message an instance logs is
 * counted, atomically, in the one counter given to host_count_messages.
 *
 *   host LIBRARY THREADS ROUNDS OFFSET_REF POSITION_REF
 *
 * OFFSET_REF, POSITION_REF: CoordinateConstraint's value references of offset and flange_b.s. Per round a thread
 * makes a CoordinateConstraint (offset 0.1, its position moved, its lambda never written: its second step warns that
 * it is violated) and a Mass in Model Exchange (its states set, its derivatives read, its FMU state saved, restored
 * and freed, three calls refused: a wrong count of states, a time before its last step, no state); it counts the lines its instances logged (host_take_log). Prints "messages N counted M
 * failures F": the lines taken, the counter, and the calls that did not return as expected. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void *(*Instantiate)(const char *, const char *);
typedef void (*Free)(void *);
typedef const char *(*TakeLog)(void *);
typedef void (*CountMessages)(int64_t *);
typedef int (*Setup)(void *, double);
typedef int (*Call)(void *, const char *, const char *);
typedef int (*SetReal)(void *, const unsigned *, size_t, const double *);
typedef int (*GetReal)(void *, const unsigned *, size_t, double *);
typedef int (*DoStep)(void *, double, double, int);
typedef int (*Exchange)(void *, const char *, const char *, const double *, size_t, double *, size_t);
typedef int (*SetTime)(void *, double);
typedef int (*SetStates)(void *, const double *, size_t);
typedef int (*GetStates)(void *, double *, size_t);
typedef int (*Completed)(void *, int, int *, int *);
typedef int (*GetState)(void *, void **);
typedef int (*SetState)(void *, void *);

static struct {
    Instantiate instantiate;
    Free free_instance;
    TakeLog take_log;
    CountMessages count_messages;
    Setup setup;
    Call call;
    SetReal set_real;
    GetReal get_real;
    DoStep do_step;
    Exchange exchange;
    SetTime set_time;
    SetStates set_states;
    GetStates derivatives, indicators;
    Completed completed;
    GetState get_state, free_state;
    SetState set_state;
} lib;

static unsigned offset_ref, position_ref;
static int rounds;
static int64_t counter;

typedef struct {
    int index;
    long messages, failures;
} Job;

static long lines(const char *log) {
    long n = 0;
    for (; log && *log; ++log) n += *log == '\n';
    return n;
}

static void constraint_round(Job *job, int round) {
    char name[64];
    snprintf(name, sizeof name, "c%d_%d", job->index, round);
    void *c = lib.instantiate("CoordinateConstraint", name);
    if (!c) {
        job->failures++;
        return;
    }
    const double offset = 0.1;
    job->failures += lib.set_real(c, &offset_ref, 1, &offset) != 0;
    job->failures += lib.setup(c, 0.0) != 0;
    job->failures += lib.call(c, "enter_initialization_mode", "fmi2EnterInitializationMode") != 0;
    job->failures += lib.call(c, "exit_initialization_mode", "fmi2ExitInitializationMode") != 0;
    for (int n = 0; n < 5; ++n) {
        const double position = 0.05 * n;
        job->failures += lib.set_real(c, &position_ref, 1, &position) != 0;
        job->failures += lib.do_step(c, n * 1e-3, 1e-3, 1) != (n == 0); /* its first step warns */
    }
    double read = 0.0;
    job->failures += lib.get_real(c, &offset_ref, 1, &read) != 0 || read != offset;
    job->failures += lib.do_step(c, 1.0, 1e-3, 1) != 3; /* not its time: refused, logged: an error */
    job->messages += lines(lib.take_log(c));
    lib.free_instance(c);
}

static void mass_round(Job *job, int round) {
    char name[64];
    snprintf(name, sizeof name, "m%d_%d", job->index, round);
    void *m = lib.instantiate("Mass", name);
    if (!m) {
        job->failures++;
        return;
    }
    double none = 0.0, x[2] = {0.25, -1.5}, last[2] = {0.0, 0.0}, dx[2] = {0.0, 0.0}, wrong[3] = {1.0, 2.0, 3.0};
    job->failures += lib.setup(m, 0.0) != 0;
    job->failures += lib.call(m, "enter_initialization_mode", "fmi2EnterInitializationMode") != 0;
    job->failures += lib.call(m, "exit_initialization_mode", "fmi2ExitInitializationMode") != 0;
    job->failures += lib.exchange(m, "me_open", "fmi2Instantiate", &none, 0, &none, 0) != 0;
    for (int n = 1; n <= 5; ++n) {
        int enter = 1, terminate = 1;
        job->failures += lib.set_time(m, n * 0.01) != 0;
        job->failures += lib.set_states(m, x, 2) != 0;
        last[0] = x[0], last[1] = x[1];
        job->failures += lib.derivatives(m, dx, 2) != 0;
        job->failures += dx[0] != x[1]; /* der(s) = v */
        job->failures += lib.indicators(m, NULL, 0) != 0;
        job->failures += lib.completed(m, 1, &enter, &terminate) != 0 || enter || terminate;
        x[0] += 0.01 * x[1];
    }
    void *saved = NULL, *none_saved = NULL;
    double back[2] = {0.0, 0.0};
    job->failures += lib.get_state(m, &saved) != 0 || !saved;
    job->failures += lib.set_states(m, dx, 2) != 0;        /* moved on */
    job->failures += lib.set_state(m, saved) != 0;         /* and back */
    job->failures += lib.exchange(m, "me_get_states", "fmi2GetContinuousStates", &none, 0, back, 2) != 0;
    job->failures += back[0] != last[0] || back[1] != last[1]; /* the states set last before the save */
    job->failures += lib.free_state(m, &saved) != 0 || saved;
    job->failures += lib.free_state(m, &none_saved) != 0; /* nothing to free */
    job->failures += lib.set_state(m, NULL) != 3;          /* no state: refused, logged */
    job->failures += lib.set_states(m, wrong, 3) != 3; /* three states for two: refused, logged: an error */
    job->failures += lib.set_time(m, 0.0) != 3;        /* before its last completed step: refused, logged */
    job->messages += lines(lib.take_log(m));
    lib.free_instance(m);
}

static void *work(void *argument) {
    Job *job = argument;
    for (int round = 0; round < rounds; ++round) {
        constraint_round(job, round);
        mass_round(job, round);
    }
    return NULL;
}

#define FIND(field, symbol)                                                                                          \
    do {                                                                                                             \
        *(void **)&lib.field = dlsym(handle, symbol);                                                                \
        if (!lib.field) {                                                                                            \
            fprintf(stderr, "no %s\n", symbol);                                                                      \
            return 2;                                                                                                \
        }                                                                                                            \
    } while (0)

int main(int argc, char **argv) {
    if (argc != 6) {
        fprintf(stderr, "usage: %s LIBRARY THREADS ROUNDS OFFSET_REF POSITION_REF\n", argv[0]);
        return 2;
    }
    void *handle = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        fprintf(stderr, "%s\n", dlerror());
        return 2;
    }
    FIND(instantiate, "host_instantiate");
    FIND(free_instance, "host_free");
    FIND(take_log, "host_take_log");
    FIND(count_messages, "host_count_messages");
    FIND(setup, "runtime_setup_experiment");
    FIND(call, "runtime_call");
    FIND(set_real, "host_set_real");
    FIND(get_real, "host_get_real");
    FIND(do_step, "host_do_step");
    FIND(exchange, "runtime_model_exchange");
    FIND(set_time, "host_set_time");
    FIND(set_states, "host_set_continuous_states");
    FIND(derivatives, "host_get_derivatives");
    FIND(indicators, "host_get_event_indicators");
    FIND(completed, "host_completed_integrator_step");
    FIND(get_state, "host_get_fmu_state");
    FIND(set_state, "host_set_fmu_state");
    FIND(free_state, "host_free_fmu_state");
    const int threads = atoi(argv[2]);
    rounds = atoi(argv[3]);
    offset_ref = (unsigned)strtoul(argv[4], NULL, 10), position_ref = (unsigned)strtoul(argv[5], NULL, 10);
    if (threads < 1 || threads > 64 || rounds < 1) return 2;
    lib.count_messages(&counter);
    pthread_t ids[64];
    Job jobs[64];
    for (int i = 0; i < threads; ++i) {
        jobs[i] = (Job){i, 0, 0};
        if (pthread_create(&ids[i], NULL, work, &jobs[i]) != 0) return 2;
    }
    long messages = 0, failures = 0;
    for (int i = 0; i < threads; ++i) {
        pthread_join(ids[i], NULL);
        messages += jobs[i].messages, failures += jobs[i].failures;
    }
    lib.count_messages(NULL);
    printf("messages %ld counted %lld failures %ld\n", messages, (long long)__atomic_load_n(&counter, __ATOMIC_SEQ_CST),
           failures);
    dlclose(handle);
    return 0;
}
