/*
 * The Python runtime of a mechfmu FMU built from a Python component: runs the model's pythonfmu slave class (the
 * entry script in the FMU's resources) in the process's Python and exposes it through the runtime_* functions of
 * runtime.h, which the FMI 2.0 glue (fmi2_functions.c) calls after its checks. It replaces pythonfmu 0.7.0's binary, whose
 * defects crash or bloat the host: it executes the entry script again at every instantiation (a new
 * class each time, kept alive: ~6 kB per instance), releases an instance's objects on an exception
 * and again in its destructor, and its library destructor runs after its static state was destroyed
 * (a use after free at process exit that corrupts the heap now and then).
 *
 * The calls into Python are those of pythonfmu 0.7.0 (same methods, arguments and conversions), so
 * results are bit for bit the same. The module is imported once per process (sys.modules), its class
 * (named after the model) instantiated per fmi2Instantiate, and every reference taken is released
 * once. Messages the slave queued (Fmi2Slave.log) go to the logger after every call. An exception
 * escaping the slave (a defect: the components log their errors) is logged with its traceback as
 * fatal and returns RUNTIME_FATAL; the objects stay valid, so fmi2FreeInstance releases them.
 *
 * The Python C API is resolved at run time (platform.c has found the runtime) through the stable
 * function forms only (Py_IncRef/Py_DecRef, no macros): no Python headers, one binary for any
 * Python 3 build of the right version.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "platform.h"
#include "runtime.h"

typedef struct _object PyObject;
typedef intptr_t Py_ssize_t_; /* Py_ssize_t: pointer-sized on every ABI (64 bits on Win64, where long has 32) */

static struct {
    int (*IsInitialized)(void);
    void (*InitializeEx)(int);
    void *(*EvalSaveThread)(void);
    int (*GILStateEnsure)(void);
    void (*GILStateRelease)(int);
    void (*IncRef)(PyObject *);
    void (*DecRef)(PyObject *);
    PyObject *(*ImportModule)(const char *);
    PyObject *(*SysGetObject)(const char *);
    PyObject *(*GetAttrString)(PyObject *, const char *);
    PyObject *(*Call)(PyObject *, PyObject *, PyObject *);
    PyObject *(*CallMethod)(PyObject *, const char *, const char *, ...);
    PyObject *(*TupleNew)(Py_ssize_t_);
    PyObject *(*DictNew)(void);
    int (*DictSetItemString)(PyObject *, const char *, PyObject *);
    PyObject *(*ListNew)(Py_ssize_t_);
    int (*ListSetItem)(PyObject *, Py_ssize_t_, PyObject *);
    PyObject *(*ListGetItem)(PyObject *, Py_ssize_t_);
    Py_ssize_t_ (*ListSize)(PyObject *);
    int (*ListInsert)(PyObject *, Py_ssize_t_, PyObject *);
    int (*ListSetSlice)(PyObject *, Py_ssize_t_, Py_ssize_t_, PyObject *);
    int (*SequenceContains)(PyObject *, PyObject *);
    PyObject *(*LongFromLong)(long);
    PyObject *(*LongFromUnsignedLong)(unsigned long);
    long (*LongAsLong)(PyObject *);
    PyObject *(*FloatFromDouble)(double);
    double (*FloatAsDouble)(PyObject *);
    PyObject *(*BoolFromLong)(long);
    int (*ObjectIsTrue)(PyObject *);
    PyObject *(*UnicodeFromString)(const char *);
    PyObject *(*UnicodeDecodeUTF8)(const char *, Py_ssize_t_, const char *);
    PyObject *(*UnicodeDecodeFSDefault)(const char *);
    const char *(*UnicodeAsUTF8)(PyObject *);
    PyObject *(*UnicodeJoin)(PyObject *, PyObject *);
    PyObject *(*BytesFromStringAndSize)(const char *, Py_ssize_t_);
    int (*BytesAsStringAndSize)(PyObject *, char **, Py_ssize_t_ *);
    PyObject *(*ErrOccurred)(void);
    void (*ErrFetch)(PyObject **, PyObject **, PyObject **);
    void (*ErrNormalizeException)(PyObject **, PyObject **, PyObject **);
    void (*ErrClear)(void);
    PyObject *(*ObjectStr)(PyObject *);
    PyObject *None;
} py;

static char model_identifier[256];

int runtime_load(const char *model, char *error, size_t size) {
#define RESOLVE(field, symbol)                                                                       \
    if (!(*(void **)&py.field = platform_python_symbol(symbol))) {                                       \
        snprintf(error, size, "the Python runtime lacks %s", symbol);                                \
        return -1;                                                                                   \
    }
    RESOLVE(IsInitialized, "Py_IsInitialized") RESOLVE(InitializeEx, "Py_InitializeEx")
    RESOLVE(EvalSaveThread, "PyEval_SaveThread") RESOLVE(GILStateEnsure, "PyGILState_Ensure")
    RESOLVE(GILStateRelease, "PyGILState_Release") RESOLVE(IncRef, "Py_IncRef") RESOLVE(DecRef, "Py_DecRef")
    RESOLVE(ImportModule, "PyImport_ImportModule") RESOLVE(SysGetObject, "PySys_GetObject")
    RESOLVE(GetAttrString, "PyObject_GetAttrString") RESOLVE(Call, "PyObject_Call")
    RESOLVE(CallMethod, "PyObject_CallMethod") RESOLVE(TupleNew, "PyTuple_New") RESOLVE(DictNew, "PyDict_New")
    RESOLVE(DictSetItemString, "PyDict_SetItemString") RESOLVE(ListNew, "PyList_New")
    RESOLVE(ListSetItem, "PyList_SetItem") RESOLVE(ListGetItem, "PyList_GetItem") RESOLVE(ListSize, "PyList_Size")
    RESOLVE(ListInsert, "PyList_Insert") RESOLVE(ListSetSlice, "PyList_SetSlice")
    RESOLVE(SequenceContains, "PySequence_Contains") RESOLVE(LongFromLong, "PyLong_FromLong")
    RESOLVE(LongFromUnsignedLong, "PyLong_FromUnsignedLong") RESOLVE(LongAsLong, "PyLong_AsLong")
    RESOLVE(FloatFromDouble, "PyFloat_FromDouble") RESOLVE(FloatAsDouble, "PyFloat_AsDouble")
    RESOLVE(BoolFromLong, "PyBool_FromLong") RESOLVE(ObjectIsTrue, "PyObject_IsTrue")
    RESOLVE(UnicodeFromString, "PyUnicode_FromString") RESOLVE(UnicodeDecodeUTF8, "PyUnicode_DecodeUTF8")
    RESOLVE(UnicodeDecodeFSDefault, "PyUnicode_DecodeFSDefault") RESOLVE(UnicodeAsUTF8, "PyUnicode_AsUTF8")
    RESOLVE(UnicodeJoin, "PyUnicode_Join") RESOLVE(BytesFromStringAndSize, "PyBytes_FromStringAndSize")
    RESOLVE(BytesAsStringAndSize, "PyBytes_AsStringAndSize") RESOLVE(ErrOccurred, "PyErr_Occurred")
    RESOLVE(ErrFetch, "PyErr_Fetch") RESOLVE(ErrNormalizeException, "PyErr_NormalizeException")
    RESOLVE(ErrClear, "PyErr_Clear") RESOLVE(ObjectStr, "PyObject_Str") RESOLVE(None, "_Py_NoneStruct")
#undef RESOLVE
    snprintf(model_identifier, sizeof model_identifier, "%s", model);
    if (!py.IsInitialized()) { /* a host without Python: this process's interpreter, never finalized */
        py.InitializeEx(0); /* 0: no signal handlers, the host keeps SIGINT */
        py.EvalSaveThread();
    }
    return 0;
}

struct Runtime {
    PyObject *cls, *instance, *log_queue, *strings; /* strings: the last fmi2GetString's values */
    RuntimeLogger logger;
    char *name, *resources;
    int visible;
};

static void clear(PyObject **object) {
    if (*object) py.DecRef(*object);
    *object = NULL;
}

static void log_text(const Runtime *s, RuntimeStatus status, const char *category, const char *text) {
    if (s->logger.log) s->logger.log(s->logger.environment, s->name, status, category, text);
}

/* The messages the slave queued (Fmi2Slave.log), to the logger; the queue emptied. */
static void drain_log(const Runtime *s) {
    if (!s->log_queue) return;
    Py_ssize_t_ n = py.ListSize(s->log_queue);
    for (Py_ssize_t_ i = 0; i < n; ++i) {
        PyObject *message = py.ListGetItem(s->log_queue, i); /* borrowed */
        PyObject *status = py.GetAttrString(message, "status"), *category = py.GetAttrString(message, "category"),
                 *text = py.GetAttrString(message, "msg");
        long level = status ? py.LongAsLong(status) : RUNTIME_ERROR;
        const char *category_text = category && category != py.None ? py.UnicodeAsUTF8(category) : NULL;
        const char *message_text = text ? py.UnicodeAsUTF8(text) : NULL;
        if (py.ErrOccurred()) py.ErrClear();
        log_text(s, level < RUNTIME_OK || level > RUNTIME_FATAL ? RUNTIME_ERROR : (RuntimeStatus)level,
                 category_text ? category_text : "logAll", message_text ? message_text : "(unreadable message)");
        if (status) py.DecRef(status);
        if (category) py.DecRef(category);
        if (text) py.DecRef(text);
    }
    if (n > 0) py.ListSetSlice(s->log_queue, 0, n, NULL);
    if (py.ErrOccurred()) py.ErrClear();
}

/* The pending Python exception as text with its traceback (a new string the caller frees), cleared. */
static char *exception_text(void) {
    PyObject *type = NULL, *value = NULL, *traceback = NULL;
    py.ErrFetch(&type, &value, &traceback);
    py.ErrNormalizeException(&type, &value, &traceback);
    char *text = NULL;
    PyObject *module = py.ImportModule("traceback");
    PyObject *lines = module && type ? py.CallMethod(module, "format_exception", "(OOO)", type,
                                                     value ? value : py.None, traceback ? traceback : py.None)
                                     : NULL;
    PyObject *empty = lines ? py.UnicodeFromString("") : NULL;
    PyObject *joined = empty ? py.UnicodeJoin(empty, lines) : NULL;
    const char *utf8 = joined ? py.UnicodeAsUTF8(joined) : NULL;
    text = strdup(utf8 ? utf8 : "an exception that cannot be formatted");
    PyObject *objects[] = {joined, empty, lines, module, traceback, value, type};
    for (size_t i = 0; i < sizeof objects / sizeof *objects; ++i) clear(&objects[i]);
    if (py.ErrOccurred()) py.ErrClear();
    return text;
}

/* An exception escaped the slave during `what`: logged with its traceback; RUNTIME_FATAL. */
static RuntimeStatus escaped(const Runtime *s, const char *what) {
    char *text = exception_text();
    size_t n = strlen(text) + strlen(what) + 64;
    char *message = malloc(n);
    if (message) {
        snprintf(message, n, "Python exception in %s:\n%s", what, text);
        log_text(s, RUNTIME_FATAL, "logStatusFatal", message);
    }
    free(message);
    free(text);
    return RUNTIME_FATAL;
}

/* The end of every call into Python: the queued messages out, the GIL released. `result` (a new
 * reference or NULL for an exception) is released; RUNTIME_FATAL after an exception, else RUNTIME_OK. */
static RuntimeStatus done(const Runtime *s, int gil, PyObject *result, const char *what) {
    RuntimeStatus status = RUNTIME_OK;
    if (!result || py.ErrOccurred()) status = escaped(s, what);
    if (result) py.DecRef(result);
    drain_log(s);
    py.GILStateRelease(gil);
    return status;
}

static char *copy(const char *text) {
    return strdup(text ? text : "");
}

static int read_first_line(const char *path, char *line, size_t size) {
    FILE *file = platform_fopen(path, "r");
    if (!file) return -1;
    int ok = fgets(line, (int)size, file) != NULL;
    fclose(file);
    if (!ok) return -1;
    line[strcspn(line, "\r\n")] = '\0';
    return line[0] ? 0 : -1;
}

/* A new instance of the slave class (pythonfmu's keyword arguments), its log queue taken. */
static int construct(Runtime *s) {
    PyObject *args = py.TupleNew(0), *kwargs = py.DictNew();
    PyObject *name = py.UnicodeDecodeUTF8(s->name, (Py_ssize_t_)strlen(s->name), "replace");
    PyObject *resources = py.UnicodeDecodeFSDefault(s->resources);
    PyObject *visible = py.LongFromLong(s->visible);
    int ok = args && kwargs && name && resources && visible && py.DictSetItemString(kwargs, "instance_name", name) == 0
             && py.DictSetItemString(kwargs, "resources", resources) == 0
             && py.DictSetItemString(kwargs, "visible", visible) == 0;
    PyObject *instance = ok ? py.Call(s->cls, args, kwargs) : NULL;
    PyObject *objects[] = {visible, resources, name, kwargs, args};
    for (size_t i = 0; i < sizeof objects / sizeof *objects; ++i) clear(&objects[i]);
    if (!instance) return -1;
    PyObject *queue = py.CallMethod(instance, "_get_log_queue", NULL);
    if (!queue) {
        py.DecRef(instance);
        return -1;
    }
    clear(&s->instance);
    clear(&s->log_queue);
    s->instance = instance;
    s->log_queue = queue;
    return 0;
}

/* The slave class: the model's entry module (named in resources/slavemodule.txt) imported once per
 * process with the resources folder on sys.path, its class named after the model. */
static PyObject *slave_class(Runtime *s) {
    char module_name[512], path[4096];
    snprintf(path, sizeof path, "%s" PATH_SEPARATOR "slavemodule.txt", s->resources);
    if (read_first_line(path, module_name, sizeof module_name) != 0) {
        char text[4200];
        snprintf(text, sizeof text, "cannot read the model's module name from %s", path);
        log_text(s, RUNTIME_FATAL, "logStatusFatal", text);
        return NULL;
    }
    PyObject *sys_path = py.SysGetObject("path"); /* borrowed */
    if (!sys_path) {
        log_text(s, RUNTIME_FATAL, "logStatusFatal", "the Python runtime has no sys.path");
        return NULL;
    }
    PyObject *folder = py.UnicodeDecodeFSDefault(s->resources);
    if (!folder) return NULL;
    int present = py.SequenceContains(sys_path, folder);
    if (present == 0) py.ListInsert(sys_path, 0, folder);
    py.DecRef(folder);
    if (present < 0 || py.ErrOccurred()) return NULL;
    PyObject *module = py.ImportModule(module_name);
    if (!module) return NULL;
    PyObject *cls = py.GetAttrString(module, model_identifier);
    py.DecRef(module);
    return cls;
}

Runtime *runtime_instantiate(const char *instanceName, const char *resources, int visible, const RuntimeLogger *logger,
                             int fmi_version) {
    (void)fmi_version; /* a Python-embedding FMU is an FMI 2.0 FMU */
    Runtime *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->logger = *logger;
    s->visible = visible != 0;
    s->name = copy(instanceName);
    s->resources = copy(resources ? resources : "");
    int gil = py.GILStateEnsure();
    s->cls = s->name && s->resources ? slave_class(s) : NULL;
    int ok = s->cls && construct(s) == 0;
    if (py.ErrOccurred()) escaped(s, "fmi2Instantiate");
    drain_log(s);
    py.GILStateRelease(gil);
    if (!ok) {
        runtime_free(s);
        return NULL;
    }
    return s;
}

void runtime_free(Runtime *s) {
    int gil = py.GILStateEnsure();
    clear(&s->strings);
    clear(&s->log_queue);
    clear(&s->instance);
    clear(&s->cls);
    py.GILStateRelease(gil);
    free(s->name);
    free(s->resources);
    free(s);
}

RuntimeStatus runtime_setup_experiment(Runtime *s, double startTime) {
    int gil = py.GILStateEnsure();
    return done(s, gil, py.CallMethod(s->instance, "setup_experiment", "(d)", startTime), "fmi2SetupExperiment");
}

RuntimeStatus runtime_call(Runtime *s, const char *method, const char *what) {
    int gil = py.GILStateEnsure();
    return done(s, gil, py.CallMethod(s->instance, method, NULL), what);
}

/* pythonfmu's reset: a new instance of the slave class in place of the old one. */
RuntimeStatus runtime_reset(Runtime *s) {
    int gil = py.GILStateEnsure();
    if (construct(s) != 0) return done(s, gil, NULL, "fmi2Reset");
    drain_log(s);
    py.GILStateRelease(gil);
    return RUNTIME_OK;
}

/* RUNTIME_OK for a step taken (do_step true), RUNTIME_DISCARD for a step refused (false). */
RuntimeStatus runtime_do_step(Runtime *s, double t, double h) {
    int gil = py.GILStateEnsure();
    PyObject *taken = py.CallMethod(s->instance, "do_step", "(dd)", t, h);
    int truth = taken ? py.ObjectIsTrue(taken) : -1;
    RuntimeStatus status = done(s, gil, taken, "fmi2DoStep");
    return status != RUNTIME_OK || truth < 0 ? RUNTIME_FATAL : truth ? RUNTIME_OK : RUNTIME_DISCARD;
}

RuntimeStatus runtime_model_exchange(Runtime *s, const char *method, const char *what, const double in[], size_t nin,
                                double out[], size_t nout) {
    int gil = py.GILStateEnsure();
    PyObject *values = py.ListNew((Py_ssize_t_)nin);
    for (size_t i = 0; values && i < nin; ++i) py.ListSetItem(values, (Py_ssize_t_)i, py.FloatFromDouble(in[i]));
    PyObject *result = values && !py.ErrOccurred()
                           ? py.CallMethod(s->instance, method, "(On)", values, (Py_ssize_t_)nout) : NULL;
    if (values) py.DecRef(values);
    if (result && result != py.None && !py.ErrOccurred()) {
        if (py.ListSize(result) == (Py_ssize_t_)nout)
            for (size_t i = 0; i < nout && !py.ErrOccurred(); ++i)
                out[i] = py.FloatAsDouble(py.ListGetItem(result, (Py_ssize_t_)i));
        else if (!py.ErrOccurred())
            log_text(s, RUNTIME_FATAL, "logStatusFatal", "the slave returned the wrong number of values");
    }
    return done(s, gil, result, what);
}

static PyObject *references(const RuntimeReference vr[], size_t nvr) {
    PyObject *list = py.ListNew((Py_ssize_t_)nvr);
    for (size_t i = 0; list && i < nvr; ++i) py.ListSetItem(list, (Py_ssize_t_)i, py.LongFromUnsignedLong(vr[i]));
    return list;
}

/* get_<kind>(references) -> a list of nvr values, each converted by `read` into values[i]. */
static RuntimeStatus get(Runtime *s, const char *method, const char *what, const RuntimeReference vr[], size_t nvr,
                      void (*read)(PyObject *, void *, size_t), void *values) {
    int gil = py.GILStateEnsure();
    PyObject *refs = references(vr, nvr);
    PyObject *result = refs ? py.CallMethod(s->instance, method, "(O)", refs) : NULL;
    if (refs) py.DecRef(refs);
    if (result && py.ListSize(result) == (Py_ssize_t_)nvr)
        for (size_t i = 0; i < nvr && !py.ErrOccurred(); ++i) read(py.ListGetItem(result, (Py_ssize_t_)i), values, i);
    else if (result && !py.ErrOccurred())
        log_text(s, RUNTIME_FATAL, "logStatusFatal", "the slave returned the wrong number of values");
    if (result && !py.ErrOccurred() && strcmp(method, "get_string") == 0) {
        clear(&s->strings); /* keeps the texts handed out valid until the next fmi2GetString */
        py.IncRef(result);
        s->strings = result;
    }
    return done(s, gil, result, what);
}

static void read_real(PyObject *item, void *values, size_t i) { ((double *)values)[i] = py.FloatAsDouble(item); }
static void read_integer(PyObject *item, void *values, size_t i) {
    ((int *)values)[i] = (int)py.LongAsLong(item);
}
static void read_boolean(PyObject *item, void *values, size_t i) {
    int truth = py.ObjectIsTrue(item);
    ((int *)values)[i] = truth > 0 ? 1 : 0;
}
static void read_string(PyObject *item, void *values, size_t i) { ((const char **)values)[i] = py.UnicodeAsUTF8(item); }

RuntimeStatus runtime_get_real(Runtime *s, const RuntimeReference vr[], size_t nvr, double values[]) {
    return get(s, "get_real", "fmi2GetReal", vr, nvr, read_real, values);
}
RuntimeStatus runtime_get_integer(Runtime *s, const RuntimeReference vr[], size_t nvr, int values[]) {
    return get(s, "get_integer", "fmi2GetInteger", vr, nvr, read_integer, values);
}
RuntimeStatus runtime_get_boolean(Runtime *s, const RuntimeReference vr[], size_t nvr, int values[]) {
    return get(s, "get_boolean", "fmi2GetBoolean", vr, nvr, read_boolean, values);
}
RuntimeStatus runtime_get_string(Runtime *s, const RuntimeReference vr[], size_t nvr, const char *values[]) {
    return get(s, "get_string", "fmi2GetString", vr, nvr, read_string, values);
}

/* set_<kind>(references, values), values[i] made a Python object by `make`. */
static RuntimeStatus set(Runtime *s, const char *method, const char *what, const RuntimeReference vr[], size_t nvr,
                      PyObject *(*make)(const void *, size_t), const void *values) {
    int gil = py.GILStateEnsure();
    PyObject *refs = references(vr, nvr), *list = py.ListNew((Py_ssize_t_)nvr);
    for (size_t i = 0; list && i < nvr; ++i) py.ListSetItem(list, (Py_ssize_t_)i, make(values, i));
    PyObject *result = refs && list && !py.ErrOccurred() ? py.CallMethod(s->instance, method, "(OO)", refs, list)
                                                         : NULL;
    if (refs) py.DecRef(refs);
    if (list) py.DecRef(list);
    return done(s, gil, result, what);
}

static PyObject *make_real(const void *values, size_t i) { return py.FloatFromDouble(((const double *)values)[i]); }
static PyObject *make_integer(const void *values, size_t i) {
    return py.LongFromLong(((const int *)values)[i]);
}
static PyObject *make_boolean(const void *values, size_t i) {
    return py.BoolFromLong(((const int *)values)[i]);
}
static PyObject *make_string(const void *values, size_t i) {
    return py.UnicodeFromString(((const char *const *)values)[i]);
}

RuntimeStatus runtime_set_real(Runtime *s, const RuntimeReference vr[], size_t nvr, const double values[]) {
    return set(s, "set_real", "fmi2SetReal", vr, nvr, make_real, values);
}
RuntimeStatus runtime_set_integer(Runtime *s, const RuntimeReference vr[], size_t nvr, const int values[]) {
    return set(s, "set_integer", "fmi2SetInteger", vr, nvr, make_integer, values);
}
RuntimeStatus runtime_set_boolean(Runtime *s, const RuntimeReference vr[], size_t nvr, const int values[]) {
    return set(s, "set_boolean", "fmi2SetBoolean", vr, nvr, make_boolean, values);
}
RuntimeStatus runtime_set_string(Runtime *s, const RuntimeReference vr[], size_t nvr, const char *const values[]) {
    return set(s, "set_string", "fmi2SetString", vr, nvr, make_string, values);
}

/* --- FMU states: the slave's state objects (_get_fmu_state), serialized by its class ----------- */

RuntimeStatus runtime_get_state(Runtime *s, void **state) {
    int gil = py.GILStateEnsure();
    PyObject *fresh = py.CallMethod(s->instance, "_get_fmu_state", NULL);
    if (fresh) py.IncRef(fresh); /* one reference for the caller, one released by done() */
    RuntimeStatus status = done(s, gil, fresh, "fmi2GetFMUstate");
    *state = status == RUNTIME_OK ? fresh : NULL;
    if (status != RUNTIME_OK && fresh) runtime_free_state(s, fresh);
    return status;
}

RuntimeStatus runtime_set_state(Runtime *s, void *state) {
    int gil = py.GILStateEnsure();
    return done(s, gil, py.CallMethod(s->instance, "_set_fmu_state", "(O)", (PyObject *)state), "fmi2SetFMUstate");
}

void runtime_free_state(Runtime *s, void *state) {
    (void)s;
    int gil = py.GILStateEnsure();
    py.DecRef((PyObject *)state);
    py.GILStateRelease(gil);
}

/* The state's serialization (_fmu_state_to_bytes): copied into a new buffer (malloc) of *size bytes. */
RuntimeStatus runtime_serialize(Runtime *s, void *state, char **bytes, size_t *size) {
    int gil = py.GILStateEnsure();
    PyObject *data = py.CallMethod(s->cls, "_fmu_state_to_bytes", "(O)", (PyObject *)state);
    char *buffer = NULL;
    Py_ssize_t_ n = 0;
    *bytes = NULL;
    if (data && py.BytesAsStringAndSize(data, &buffer, &n) == 0 && (*bytes = malloc(n ? (size_t)n : 1))) {
        memcpy(*bytes, buffer, (size_t)n);
        *size = (size_t)n;
    }
    RuntimeStatus status = done(s, gil, data, "fmi2SerializeFMUstate");
    if (status == RUNTIME_OK && !*bytes) status = RUNTIME_ERROR;
    return status;
}

RuntimeStatus runtime_deserialize(Runtime *s, const char *bytes, size_t size, void **state) {
    int gil = py.GILStateEnsure();
    PyObject *data = py.BytesFromStringAndSize(bytes, (Py_ssize_t_)size);
    PyObject *fresh = data ? py.CallMethod(s->cls, "_fmu_state_from_bytes", "(O)", data) : NULL;
    if (data) py.DecRef(data);
    if (fresh) py.IncRef(fresh);
    RuntimeStatus status = done(s, gil, fresh, "fmi2DeSerializeFMUstate");
    *state = status == RUNTIME_OK ? fresh : NULL;
    if (status != RUNTIME_OK && fresh) runtime_free_state(s, fresh);
    return status;
}
