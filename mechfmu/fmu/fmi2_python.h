/* The Python side of a mechfmu FMU (fmi2_python.c), called by the loader (fmi2_loader.c) once a
 * call has passed its checks. Every function takes the GIL itself; a status other than fmi2OK has
 * been logged through the instance's logger. */
#ifndef MECHFMU_FMI2_PYTHON_H
#define MECHFMU_FMI2_PYTHON_H

#include <stddef.h>

#include "fmi2Functions.h"

typedef struct Slave Slave;

/* The slave_* calls are the API of the host library (fmi2_native.c built with MECHFMU_HOST_LIBRARY): exported
 * there, internal to an FMU's binary. */
#if defined(MECHFMU_HOST_LIBRARY) && defined(_WIN32)
#define SLAVE_API __declspec(dllexport)
#elif defined(MECHFMU_HOST_LIBRARY)
#define SLAVE_API __attribute__((visibility("default")))
#else
#define SLAVE_API
#endif

/* Resolve the Python C API (made global by the loader) and start an interpreter if the process has
 * none; `model` is the model identifier (the slave class's name). 0, or -1 with `error` set. */
SLAVE_API int slave_load(const char *model, char *error, size_t size);

/* A new slave instance, or NULL (logged); messages go to functions->logger. */
SLAVE_API Slave *slave_instantiate(fmi2String instanceName, fmi2String fmuResourceLocation, fmi2Boolean visible,
                         const fmi2CallbackFunctions *functions);
SLAVE_API void slave_free(Slave *s);

SLAVE_API fmi2Status slave_setup_experiment(Slave *s, fmi2Real startTime);
/* A method without arguments (enter_initialization_mode, exit_initialization_mode, terminate);
 * `what` names the FMI function in messages. */
SLAVE_API fmi2Status slave_call(Slave *s, const char *method, const char *what);
SLAVE_API fmi2Status slave_reset(Slave *s);
SLAVE_API fmi2Status slave_do_step(Slave *s, fmi2Real t, fmi2Real h);

SLAVE_API fmi2Status slave_get_real(Slave *s, const fmi2ValueReference vr[], size_t nvr, fmi2Real values[]);
SLAVE_API fmi2Status slave_get_integer(Slave *s, const fmi2ValueReference vr[], size_t nvr, fmi2Integer values[]);
SLAVE_API fmi2Status slave_get_boolean(Slave *s, const fmi2ValueReference vr[], size_t nvr, fmi2Boolean values[]);
SLAVE_API fmi2Status slave_get_string(Slave *s, const fmi2ValueReference vr[], size_t nvr, fmi2String values[]);
SLAVE_API fmi2Status slave_set_real(Slave *s, const fmi2ValueReference vr[], size_t nvr, const fmi2Real values[]);
SLAVE_API fmi2Status slave_set_integer(Slave *s, const fmi2ValueReference vr[], size_t nvr, const fmi2Integer values[]);
SLAVE_API fmi2Status slave_set_boolean(Slave *s, const fmi2ValueReference vr[], size_t nvr, const fmi2Boolean values[]);
SLAVE_API fmi2Status slave_set_string(Slave *s, const fmi2ValueReference vr[], size_t nvr, const fmi2String values[]);

/* A Model Exchange call: the slave's `method`(values of in[0..nin), nout) returns nout values into out, or None
 * after logging why it refuses (the returned status is then that of the logged error); `what` names the FMI
 * function in messages. */
SLAVE_API fmi2Status slave_model_exchange(Slave *s, const char *method, const char *what, const fmi2Real in[], size_t nin,
                                fmi2Real out[], size_t nout);

/* FMU states are the slave's Python state objects (one reference each, released by slave_free_state). */
SLAVE_API fmi2Status slave_get_state(Slave *s, void **state);
SLAVE_API fmi2Status slave_set_state(Slave *s, void *state);
SLAVE_API void slave_free_state(Slave *s, void *state);
/* The state's bytes in a new malloc'd buffer of *size bytes (the caller frees it). */
SLAVE_API fmi2Status slave_serialize(Slave *s, void *state, char **bytes, size_t *size);
SLAVE_API fmi2Status slave_deserialize(Slave *s, const char *bytes, size_t size, void **state);

#endif
