/* sources: runtime.c model.c text.c platform.c expression.c */
/* The reader of serialized FMU states (runtime_deserialize): any bytes are a state of the class, checked whole, or
 * refused with a reason; an accepted state restores and steps. The first byte chooses how the rest is used:
 * even, the bytes as they are; odd, as changes (position, xor) to a valid state of an instance (set up by the next
 * byte), whose checksum is then made right again, so that the checks behind the checksum are reached too. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"
#include "fuzz_class.h"

static void quiet(void *environment, const char *name, RuntimeStatus status, const char *category,
                  const char *message) {
    (void)environment, (void)name, (void)status, (void)category, (void)message;
}

static uint32_t crc32_of(const unsigned char *p, size_t size) {
    uint32_t crc = ~0u;
    for (size_t i = 0; i < size; ++i) {
        crc ^= p[i];
        for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
    }
    return ~crc;
}

static void use(Runtime *s, void *state) {
    if (runtime_set_state(s, state) != RUNTIME_OK) return;
    RuntimeReference reals[] = {0, 4, 5, 6, 7, 8, 9}, integer = 1, boolean = 2, text = 3;
    double values[7];
    int n;
    int flag;
    const char *string;
    runtime_get_real(s, reals, 7, values);
    runtime_get_integer(s, &integer, 1, &n);
    runtime_get_boolean(s, &boolean, 1, &flag);
    runtime_get_string(s, &text, 1, &string);
    double in[5] = {1, 1, 6, 5, 1}, out[1]; /* dy/du */
    runtime_model_exchange(s, "directional_derivative", "fuzz", in, 5, out, 1);
    runtime_do_step(s, 0.0, 1e-3);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static int loaded;
    char why[256];
    if (!loaded) loaded = 1, runtime_load("Fuzz", why, sizeof why);
    if (size < 2) return 0;
    RuntimeLogger functions = {quiet, NULL};
    Runtime *s = runtime_instantiate("fuzz", "", 0, &functions, 2);
    if (!s) return 0;
    unsigned char *bytes = NULL;
    size_t length = 0;
    if (data[0] % 2 == 0) {
        length = size - 1;
        bytes = malloc(length ? length : 1);
        if (bytes) memcpy(bytes, data + 1, length);
    } else { /* a valid state, then changed */
        RuntimeReference m = 0, text = 3, u = 5;
        double mass = 1.0 + data[1], force = (double)data[1] - 100.0;
        const char *words[] = {data[1] & 1 ? "a longer text \xf0\x9f\x98\x80" : ""};
        runtime_set_real(s, &m, 1, &mass);
        runtime_set_string(s, &text, 1, words);
        if (data[1] & 2) runtime_call(s, "exit_initialization_mode", "fuzz");
        if (data[1] & 4) runtime_model_exchange(s, "me_open", "fuzz", NULL, 0, NULL, 0);
        runtime_set_real(s, &u, 1, &force);
        if (data[1] & 8) runtime_do_step(s, 0.0, 1e-3);
        void *state = NULL;
        char *serialized = NULL;
        if (runtime_get_state(s, &state) == RUNTIME_OK && runtime_serialize(s, state, &serialized, &length) == RUNTIME_OK) {
            bytes = (unsigned char *)serialized;
            for (size_t i = 2; i + 1 < size && length > 4; i += 2) bytes[data[i] % (length - 4)] ^= data[i + 1];
            if (length > 4) {
                uint32_t crc = crc32_of(bytes, length - 4);
                for (int k = 0; k < 4; ++k) bytes[length - 4 + k] = (unsigned char)(crc >> (8 * k));
            }
        }
        if (state) runtime_free_state(s, state);
    }
    void *restored = NULL;
    if (bytes && runtime_deserialize(s, (const char *)bytes, length, &restored) == RUNTIME_OK && restored) {
        int initialized, model_exchange;
        if (runtime_state_modes(restored, &initialized, &model_exchange) == 0) use(s, restored);
        runtime_free_state(s, restored);
    }
    free(bytes);
    runtime_free(s);
    return 0;
}
