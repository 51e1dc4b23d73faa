/*
 * The Python side of a mechfmu FMU: runs the model's pythonfmu slave class (the entry script in the
 * FMU's resources) in the process's Python and exposes it through fmi2 functions (slave_*), which
 * the loader (fmi2_loader.c) calls after its checks. It replaces pythonfmu 0.7.0's binary, whose
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
 * fatal and returns fmi2Fatal; the objects stay valid, so fmi2FreeInstance releases them.
 *
 * The Python C API is resolved at run time (fmi2_platform.c has found the runtime) through the stable
 * function forms only (Py_IncRef/Py_DecRef, no macros): no Python headers, one binary for any
 * Python 3 build of the right version.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmi2_platform.h"
#include "fmi2_python.h"

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

int slave_load(const char *model, char *error, size_t size) {
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

struct Slave {
    PyObject *cls, *instance, *log_queue, *strings; /* strings: the last fmi2GetString's values */
    fmi2CallbackFunctions functions;
    char *name, *resources;
    int visible;
};

static void clear(PyObject **object) {
    if (*object) py.DecRef(*object);
    *object = NULL;
}

static void log_text(const Slave *s, fmi2Status status, const char *category, const char *text) {
    if (s->functions.logger)
        s->functions.logger(s->functions.componentEnvironment, s->name, status, category, "%s", text);
}

/* The messages the slave queued (Fmi2Slave.log), to the logger; the queue emptied. */
static void drain_log(const Slave *s) {
    if (!s->log_queue) return;
    Py_ssize_t_ n = py.ListSize(s->log_queue);
    for (Py_ssize_t_ i = 0; i < n; ++i) {
        PyObject *message = py.ListGetItem(s->log_queue, i); /* borrowed */
        PyObject *status = py.GetAttrString(message, "status"), *category = py.GetAttrString(message, "category"),
                 *text = py.GetAttrString(message, "msg");
        long level = status ? py.LongAsLong(status) : fmi2Error;
        const char *category_text = category && category != py.None ? py.UnicodeAsUTF8(category) : NULL;
        const char *message_text = text ? py.UnicodeAsUTF8(text) : NULL;
        if (py.ErrOccurred()) py.ErrClear();
        log_text(s, level < fmi2OK || level > fmi2Fatal ? fmi2Error : (fmi2Status)level,
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

/* An exception escaped the slave during `what`: logged with its traceback; fmi2Fatal. */
static fmi2Status escaped(const Slave *s, const char *what) {
    char *text = exception_text();
    size_t n = strlen(text) + strlen(what) + 64;
    char *message = malloc(n);
    if (message) {
        snprintf(message, n, "Python exception in %s:\n%s", what, text);
        log_text(s, fmi2Fatal, "logStatusFatal", message);
    }
    free(message);
    free(text);
    return fmi2Fatal;
}

/* The end of every call into Python: the queued messages out, the GIL released. `result` (a new
 * reference or NULL for an exception) is released; fmi2Fatal after an exception, else fmi2OK. */
static fmi2Status done(const Slave *s, int gil, PyObject *result, const char *what) {
    fmi2Status status = fmi2OK;
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
static int construct(Slave *s) {
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
static PyObject *slave_class(Slave *s) {
    char module_name[512], path[4096];
    snprintf(path, sizeof path, "%s" PATH_SEPARATOR "slavemodule.txt", s->resources);
    if (read_first_line(path, module_name, sizeof module_name) != 0) {
        char text[4200];
        snprintf(text, sizeof text, "cannot read the model's module name from %s", path);
        log_text(s, fmi2Fatal, "logStatusFatal", text);
        return NULL;
    }
    PyObject *sys_path = py.SysGetObject("path"); /* borrowed */
    if (!sys_path) {
        log_text(s, fmi2Fatal, "logStatusFatal", "the Python runtime has no sys.path");
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

Slave *slave_instantiate(fmi2String instanceName, fmi2String fmuResourceLocation, fmi2Boolean visible,
                         const fmi2CallbackFunctions *functions) {
    Slave *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->functions = *functions;
    s->visible = visible != fmi2False;
    s->name = copy(instanceName);
    char why[1024];
    s->resources = platform_resource_path(fmuResourceLocation, why, sizeof why); /* checked by the loader */
    int gil = py.GILStateEnsure();
    s->cls = s->name && s->resources ? slave_class(s) : NULL;
    int ok = s->cls && construct(s) == 0;
    if (py.ErrOccurred()) escaped(s, "fmi2Instantiate");
    drain_log(s);
    py.GILStateRelease(gil);
    if (!ok) {
        slave_free(s);
        return NULL;
    }
    return s;
}

void slave_free(Slave *s) {
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

fmi2Status slave_setup_experiment(Slave *s, fmi2Real startTime) {
    int gil = py.GILStateEnsure();
    return done(s, gil, py.CallMethod(s->instance, "setup_experiment", "(d)", startTime), "fmi2SetupExperiment");
}

fmi2Status slave_call(Slave *s, const char *method, const char *what) {
    int gil = py.GILStateEnsure();
    return done(s, gil, py.CallMethod(s->instance, method, NULL), what);
}

/* pythonfmu's reset: a new instance of the slave class in place of the old one. */
fmi2Status slave_reset(Slave *s) {
    int gil = py.GILStateEnsure();
    if (construct(s) != 0) return done(s, gil, NULL, "fmi2Reset");
    drain_log(s);
    py.GILStateRelease(gil);
    return fmi2OK;
}

/* fmi2OK for a step taken (do_step true), fmi2Discard for a step refused (false). */
fmi2Status slave_do_step(Slave *s, fmi2Real t, fmi2Real h) {
    int gil = py.GILStateEnsure();
    PyObject *taken = py.CallMethod(s->instance, "do_step", "(dd)", t, h);
    int truth = taken ? py.ObjectIsTrue(taken) : -1;
    fmi2Status status = done(s, gil, taken, "fmi2DoStep");
    return status != fmi2OK || truth < 0 ? fmi2Fatal : truth ? fmi2OK : fmi2Discard;
}

fmi2Status slave_model_exchange(Slave *s, const char *method, const char *what, const fmi2Real in[], size_t nin,
                                fmi2Real out[], size_t nout) {
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
            log_text(s, fmi2Fatal, "logStatusFatal", "the slave returned the wrong number of values");
    }
    return done(s, gil, result, what);
}

static PyObject *references(const fmi2ValueReference vr[], size_t nvr) {
    PyObject *list = py.ListNew((Py_ssize_t_)nvr);
    for (size_t i = 0; list && i < nvr; ++i) py.ListSetItem(list, (Py_ssize_t_)i, py.LongFromUnsignedLong(vr[i]));
    return list;
}

/* get_<kind>(references) -> a list of nvr values, each converted by `read` into values[i]. */
static fmi2Status get(Slave *s, const char *method, const char *what, const fmi2ValueReference vr[], size_t nvr,
                      void (*read)(PyObject *, void *, size_t), void *values) {
    int gil = py.GILStateEnsure();
    PyObject *refs = references(vr, nvr);
    PyObject *result = refs ? py.CallMethod(s->instance, method, "(O)", refs) : NULL;
    if (refs) py.DecRef(refs);
    if (result && py.ListSize(result) == (Py_ssize_t_)nvr)
        for (size_t i = 0; i < nvr && !py.ErrOccurred(); ++i) read(py.ListGetItem(result, (Py_ssize_t_)i), values, i);
    else if (result && !py.ErrOccurred())
        log_text(s, fmi2Fatal, "logStatusFatal", "the slave returned the wrong number of values");
    if (result && !py.ErrOccurred() && strcmp(method, "get_string") == 0) {
        clear(&s->strings); /* keeps the texts handed out valid until the next fmi2GetString */
        py.IncRef(result);
        s->strings = result;
    }
    return done(s, gil, result, what);
}

static void read_real(PyObject *item, void *values, size_t i) { ((fmi2Real *)values)[i] = py.FloatAsDouble(item); }
static void read_integer(PyObject *item, void *values, size_t i) {
    ((fmi2Integer *)values)[i] = (fmi2Integer)py.LongAsLong(item);
}
static void read_boolean(PyObject *item, void *values, size_t i) {
    int truth = py.ObjectIsTrue(item);
    ((fmi2Boolean *)values)[i] = truth > 0 ? fmi2True : fmi2False;
}
static void read_string(PyObject *item, void *values, size_t i) { ((fmi2String *)values)[i] = py.UnicodeAsUTF8(item); }

fmi2Status slave_get_real(Slave *s, const fmi2ValueReference vr[], size_t nvr, fmi2Real values[]) {
    return get(s, "get_real", "fmi2GetReal", vr, nvr, read_real, values);
}
fmi2Status slave_get_integer(Slave *s, const fmi2ValueReference vr[], size_t nvr, fmi2Integer values[]) {
    return get(s, "get_integer", "fmi2GetInteger", vr, nvr, read_integer, values);
}
fmi2Status slave_get_boolean(Slave *s, const fmi2ValueReference vr[], size_t nvr, fmi2Boolean values[]) {
    return get(s, "get_boolean", "fmi2GetBoolean", vr, nvr, read_boolean, values);
}
fmi2Status slave_get_string(Slave *s, const fmi2ValueReference vr[], size_t nvr, fmi2String values[]) {
    return get(s, "get_string", "fmi2GetString", vr, nvr, read_string, values);
}

/* set_<kind>(references, values), values[i] made a Python object by `make`. */
static fmi2Status set(Slave *s, const char *method, const char *what, const fmi2ValueReference vr[], size_t nvr,
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

static PyObject *make_real(const void *values, size_t i) { return py.FloatFromDouble(((const fmi2Real *)values)[i]); }
static PyObject *make_integer(const void *values, size_t i) {
    return py.LongFromLong(((const fmi2Integer *)values)[i]);
}
static PyObject *make_boolean(const void *values, size_t i) {
    return py.BoolFromLong(((const fmi2Boolean *)values)[i]);
}
static PyObject *make_string(const void *values, size_t i) {
    return py.UnicodeFromString(((const fmi2String *)values)[i]);
}

fmi2Status slave_set_real(Slave *s, const fmi2ValueReference vr[], size_t nvr, const fmi2Real values[]) {
    return set(s, "set_real", "fmi2SetReal", vr, nvr, make_real, values);
}
fmi2Status slave_set_integer(Slave *s, const fmi2ValueReference vr[], size_t nvr, const fmi2Integer values[]) {
    return set(s, "set_integer", "fmi2SetInteger", vr, nvr, make_integer, values);
}
fmi2Status slave_set_boolean(Slave *s, const fmi2ValueReference vr[], size_t nvr, const fmi2Boolean values[]) {
    return set(s, "set_boolean", "fmi2SetBoolean", vr, nvr, make_boolean, values);
}
fmi2Status slave_set_string(Slave *s, const fmi2ValueReference vr[], size_t nvr, const fmi2String values[]) {
    return set(s, "set_string", "fmi2SetString", vr, nvr, make_string, values);
}

/* --- FMU states: the slave's state objects (_get_fmu_state), serialized by its class ----------- */

fmi2Status slave_get_state(Slave *s, void **state) {
    int gil = py.GILStateEnsure();
    PyObject *fresh = py.CallMethod(s->instance, "_get_fmu_state", NULL);
    if (fresh) py.IncRef(fresh); /* one reference for the caller, one released by done() */
    fmi2Status status = done(s, gil, fresh, "fmi2GetFMUstate");
    *state = status == fmi2OK ? fresh : NULL;
    if (status != fmi2OK && fresh) slave_free_state(s, fresh);
    return status;
}

fmi2Status slave_set_state(Slave *s, void *state) {
    int gil = py.GILStateEnsure();
    return done(s, gil, py.CallMethod(s->instance, "_set_fmu_state", "(O)", (PyObject *)state), "fmi2SetFMUstate");
}

void slave_free_state(Slave *s, void *state) {
    (void)s;
    int gil = py.GILStateEnsure();
    py.DecRef((PyObject *)state);
    py.GILStateRelease(gil);
}

/* The state's serialization (_fmu_state_to_bytes): copied into a new buffer (malloc) of *size bytes. */
fmi2Status slave_serialize(Slave *s, void *state, char **bytes, size_t *size) {
    int gil = py.GILStateEnsure();
    PyObject *data = py.CallMethod(s->cls, "_fmu_state_to_bytes", "(O)", (PyObject *)state);
    char *buffer = NULL;
    Py_ssize_t_ n = 0;
    *bytes = NULL;
    if (data && py.BytesAsStringAndSize(data, &buffer, &n) == 0 && (*bytes = malloc(n ? (size_t)n : 1))) {
        memcpy(*bytes, buffer, (size_t)n);
        *size = (size_t)n;
    }
    fmi2Status status = done(s, gil, data, "fmi2SerializeFMUstate");
    if (status == fmi2OK && !*bytes) status = fmi2Error;
    return status;
}

fmi2Status slave_deserialize(Slave *s, const char *bytes, size_t size, void **state) {
    int gil = py.GILStateEnsure();
    PyObject *data = py.BytesFromStringAndSize(bytes, (Py_ssize_t_)size);
    PyObject *fresh = data ? py.CallMethod(s->cls, "_fmu_state_from_bytes", "(O)", data) : NULL;
    if (data) py.DecRef(data);
    if (fresh) py.IncRef(fresh);
    fmi2Status status = done(s, gil, fresh, "fmi2DeSerializeFMUstate");
    *state = status == fmi2OK ? fresh : NULL;
    if (status != fmi2OK && fresh) slave_free_state(s, fresh);
    return status;
}
