/* sources: fmi3_functions.c glue.c runtime.c model.c text.c platform.c expression.c */
/* The FMI 3.0 glue's reader of serialized FMU states (fmi3DeserializeFMUState: its header, then the runtime's body)
 * through the FMI 3.0 calls of a live co-simulation instance, as a host hands them over. The first byte chooses how
 * the rest is used: even, the bytes as they are; odd, as changes (position, xor) to a valid state of the instance
 * (set up by the next byte), whose header checksum is then made right again with the first bit of the first change
 * (so that the checks behind it are reached too), or left as it is. An accepted state is restored, stepped, read
 * and freed; a refused one changes nothing. The class is named after this program, as a glue finds it. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmi3Functions.h"
#define FUZZ_CLASS_NAME "fuzz_fmi3_state"
#include "fuzz_class.h"
#include "fuzz_token.h"

static void quiet(fmi3InstanceEnvironment environment, fmi3Status status, fmi3String category, fmi3String message) {
    (void)environment, (void)status, (void)category, (void)message;
}

static uint32_t crc32_of(const unsigned char *p, size_t size, uint32_t crc) {
    crc = ~crc;
    for (size_t i = 0; i < size; ++i) {
        crc ^= p[i];
        for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
    }
    return ~crc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *resources = fuzz_resources("fuzz_fmi3_state");
    if (!resources) return 0;
    if (size < 2) return 0;
    fmi3Instance c = fmi3InstantiateCoSimulation("fuzz", FUZZ_TOKEN, resources, fmi3False, fmi3False,
                                                 data[1] & 16 ? fmi3True : fmi3False, fmi3False, NULL, 0, NULL, quiet,
                                                 NULL);
    if (!c) abort(); /* the token and the class are there: instantiation must succeed */
    unsigned char *bytes = NULL;
    size_t length = 0;
    if (data[0] % 2 == 0) {
        length = size - 1;
        bytes = malloc(length ? length : 1);
        if (bytes) memcpy(bytes, data + 1, length);
    } else { /* a valid state, then changed */
        fmi3ValueReference m = 0, u = 5;
        double mass = 1.0 + data[1], force = (double)data[1] - 100.0;
        fmi3SetFloat64(c, &m, 1, &mass, 1);
        if (data[1] & 2) {
            fmi3EnterInitializationMode(c, fmi3False, 0.0, 0.0, fmi3False, 0.0);
            fmi3ExitInitializationMode(c);
            if (data[1] & 16) {
                fmi3Boolean a, b, d, e, f;
                fmi3Float64 next;
                fmi3UpdateDiscreteStates(c, &a, &b, &d, &e, &f, &next);
                fmi3EnterStepMode(c);
            }
        }
        fmi3SetFloat64(c, &u, 1, &force, 1);
        if (data[1] & 8) {
            fmi3Boolean event, terminate, early;
            fmi3Float64 last;
            fmi3DoStep(c, 0.0, 1e-3, fmi3True, &event, &terminate, &early, &last);
        }
        fmi3FMUState state = NULL;
        if (fmi3GetFMUState(c, &state) == fmi3OK && fmi3SerializedFMUStateSize(c, state, &length) == fmi3OK
            && (bytes = malloc(length)) != NULL && fmi3SerializeFMUState(c, state, bytes, length) == fmi3OK) {
            for (size_t i = 2; i + 1 < size && length; i += 2) bytes[data[i] % length] ^= data[i + 1];
            if (length > 13 && size > 2 && (data[2] & 1)) { /* the checksum made right: magic 8, index 1, crc 4 */
                uint32_t crc = crc32_of(bytes + 13, length - 13, crc32_of(bytes + 8, 1, 0));
                for (int k = 0; k < 4; ++k) bytes[9 + k] = (unsigned char)(crc >> (8 * k));
            }
        }
        fmi3FreeFMUState(c, &state);
    }
    fmi3FMUState restored = NULL;
    if (bytes && fmi3DeserializeFMUState(c, bytes, length, &restored) == fmi3OK && restored) {
        if (fmi3SetFMUState(c, restored) == fmi3OK) {
            fmi3ValueReference reals[] = {0, 4, 5, 6, 7};
            double values[5];
            fmi3GetFloat64(c, reals, 5, values, 5);
            fmi3Boolean event, terminate, early;
            fmi3Float64 last;
            fmi3DoStep(c, 0.0, 1e-3, fmi3True, &event, &terminate, &early, &last);
        }
        fmi3FreeFMUState(c, &restored);
    }
    free(bytes);
    fmi3FreeInstance(c);
    return 0;
}
