/* What every FMI version's glue layer keeps alike: the set of live instances, in which a host's handle is looked up
 * before it is used, and the phase a serialized state's body holds. No FMI type: the glue layers (fmi2_functions.c,
 * fmi3_functions.c) call it with their own instances. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "glue.h"
#include "platform.h"

/* Every live instance of this process (calls on others are refused): the set of glue.h, in which a handle is
 * checked in O(1) whatever the number of instances, without ever reading through the handle itself (a freed or
 * foreign pointer is only compared, never dereferenced). Adding and removing take the lock; as tombstones are taken
 * again, a new table comes only as the number of live instances grows. */
static platform_mutex_t instances_lock = PLATFORM_MUTEX_INIT;
_Atomic(GlueTable *) glue_live; /* NULL before the first instance */
static size_t live_count;
char glue_freed_slot;

/* Add a new instance to the live set (a new table when half used); -1 when out of memory. */
int glue_add(void *w) {
    platform_lock(&instances_lock);
    GlueTable *table = atomic_load_explicit(&glue_live, memory_order_relaxed);
    if (!table || 2 * (table->used + 1) > table->capacity) {
        size_t capacity = 64;
        while (2 * (live_count + 1) > capacity / 2) capacity *= 2; /* a quarter full at most, when new */
        GlueTable *fresh = calloc(1, sizeof *fresh + capacity * sizeof fresh->slots[0]);
        if (!fresh) {
            platform_unlock(&instances_lock);
            return -1;
        }
        fresh->retired = table;
        fresh->capacity = capacity;
        for (size_t i = 0; table && i < table->capacity; ++i) {
            void *slot = atomic_load_explicit(&table->slots[i], memory_order_relaxed);
            if (slot && slot != GLUE_FREED) {
                atomic_store_explicit(&fresh->slots[glue_find_slot(fresh, slot)], slot, memory_order_relaxed);
                ++fresh->used;
            }
        }
        atomic_store_explicit(&glue_live, fresh, memory_order_release);
        table = fresh;
    }
    size_t i = glue_home_slot(w, table->capacity); /* the first tombstone or empty slot of its probe */
    void *slot;
    while ((slot = atomic_load_explicit(&table->slots[i], memory_order_relaxed)) && slot != GLUE_FREED)
        i = (i + 1) & (table->capacity - 1);
    atomic_store_explicit(&table->slots[i], w, memory_order_release);
    table->used += !slot;
    ++live_count;
    platform_unlock(&instances_lock);
    return 0;
}

/* Take `w` out of the live set (its slot becomes a tombstone); 0 if it was not in it (freed twice, or not
 * ours). */
int glue_remove(const void *w) {
    platform_lock(&instances_lock);
    GlueTable *table = atomic_load_explicit(&glue_live, memory_order_relaxed);
    size_t slot = w && w != GLUE_FREED && table ? glue_find_slot(table, w) : 0;
    if (!w || w == GLUE_FREED || !table || !atomic_load_explicit(&table->slots[slot], memory_order_relaxed)) {
        platform_unlock(&instances_lock);
        return 0;
    }
    atomic_store_explicit(&table->slots[slot], GLUE_FREED, memory_order_release);
    --live_count;
    platform_unlock(&instances_lock);
    return 1;
}

/* When the library unloads (the host's last dlclose after the last fmi2FreeInstance), the tables go with it: a host
 * that loads and unloads the FMU for every instance (ecos does) would otherwise lose one per load. */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((destructor)) static void release_tables(void) {
    if (live_count) return; /* instances left at the process's exit: nothing to reclaim */
    GlueTable *table = atomic_exchange(&glue_live, NULL);
    while (table) {
        GlueTable *retired = table->retired;
        free(table);
        table = retired;
    }
}
#endif

/* The phase a component's serialized state holds (the body as the component serializes it): a native body
 * (runtime.c: "mechfmu-native-state 2", the class name, five doubles, then "initialized" and "in Model Exchange
 * use" as little-endian doubles) or a Python component's JSON (json.dumps of components/base.py get_state: the last
 * top-level key before "accepted" is "initialized"). 1 initialized, 0 not, -1 not known; *model_exchange likewise. */
int glue_body_phase(const char *body, size_t n, int *model_exchange) {
    static const char native[] = "mechfmu-native-state 2", key[] = ", \"initialized\": ";
    *model_exchange = -1;
    if (n > sizeof native && !memcmp(body, native, sizeof native)) {
        const char *name_end = memchr(body + sizeof native, '\0', n - sizeof native);
        size_t at = name_end ? (size_t)(name_end + 1 - body) + 5 * 8 : n;
        if (at + 16 > n) return -1;
        double flags[2];
        for (int k = 0; k < 2; ++k) {
            uint64_t bits = 0;
            for (int i = 7; i >= 0; --i) bits = bits << 8 | (unsigned char)body[at + 8 * k + (size_t)i];
            memcpy(&flags[k], &bits, sizeof bits);
        }
        *model_exchange = flags[1] == 1.0 ? 1 : flags[1] == 0.0 ? 0 : -1;
        return flags[0] == 1.0 ? 1 : flags[0] == 0.0 ? 0 : -1;
    }
    if (n < sizeof key + 4 || body[0] != '{') return -1;
    for (size_t i = n - (sizeof key - 1) - 4; i > 0; --i) /* the last occurrence: the top level's */
        if (!memcmp(body + i, key, sizeof key - 1)) {
            const char *value = body + i + sizeof key - 1;
            size_t left = n - (i + sizeof key - 1);
            return left >= 4 && !memcmp(value, "true", 4) ? 1 : left >= 5 && !memcmp(value, "false", 5) ? 0 : -1;
        }
    return -1;
}

int glue_check_token(const char *folder, const char *token, const char *token_name, const char *noun,
                     const char *location_name, char *why, size_t size) {
    static const char name[] = PATH_SEPARATOR "mechfmu_guid.txt";
    size_t length = strlen(folder);
    while (length && (folder[length - 1] == '/' || folder[length - 1] == '\\')) --length; /* FMI 3.0: a trailing one */
    char *path = malloc(length + sizeof name);
    if (!path) {
        snprintf(why, size, "out of memory");
        return -1;
    }
    memcpy(path, folder, length);
    memcpy(path + length, name, sizeof name);
    char own[128] = "";
    FILE *file = platform_fopen(path, "r");
    int read = file && fgets(own, sizeof own, file) != NULL;
    if (file) fclose(file);
    own[strcspn(own, "\r\n")] = '\0';
    if (!read || !own[0]) {
        snprintf(why, size, "cannot read this FMU's %s from %.500s: %s must be the resources folder of the unpacked "
                 "FMU", noun, path, location_name);
        free(path);
        return -1;
    }
    free(path);
    if (strcmp(token, own) != 0) {
        snprintf(why, size, "%s '%.100s' is not this FMU's %s '%s': the host passed the %s of another FMU (or of "
                 "another build of it)", token_name, token, noun, own, noun);
        return -1;
    }
    return 0;
}

int glue_utf8_valid(const unsigned char *s) {
    while (*s) {
        int n = *s < 0x80 ? 0 : (*s >> 5) == 6 ? 1 : (*s >> 4) == 14 ? 2 : (*s >> 3) == 30 ? 3 : -1;
        if (n < 0) return 0;
        ++s;
        while (n-- > 0)
            if ((*s++ & 0xC0) != 0x80) return 0;
    }
    return 1;
}

int glue_category_enabled(int debug_logging, char *const *categories, size_t n, const char *category) {
    if (!debug_logging) return 0;
    if (!categories) return 1;
    for (size_t i = 0; i < n; ++i)
        if (!strcmp(categories[i], "logAll") || (category && !strcmp(categories[i], category))) return 1;
    return 0;
}

static unsigned char state_index(int state) {
    unsigned char index = 0;
    while (state > 1) state >>= 1, ++index;
    return index;
}

void glue_write_state(unsigned char *out, const char *magic, int state, const char *body, size_t n) {
    unsigned char index = state_index(state);
    uint32_t crc = platform_crc32(body, n, platform_crc32(&index, 1, 0));
    memcpy(out, magic, GLUE_MAGIC_SIZE);
    out[GLUE_MAGIC_SIZE] = index;
    for (int i = 0; i < 4; ++i) out[GLUE_MAGIC_SIZE + 1 + i] = (unsigned char)(crc >> (8 * i));
    memcpy(out + GLUE_HEADER_SIZE, body, n);
}

const char *glue_read_state(const unsigned char *bytes, size_t size, const char *magic, int *state) {
    if (!(size > GLUE_HEADER_SIZE && !memcmp(bytes, magic, GLUE_MAGIC_SIZE))) return "no mechfmu state header";
    uint32_t stored = 0;
    for (int i = 3; i >= 0; --i) stored = stored << 8 | bytes[GLUE_MAGIC_SIZE + 1 + i];
    if (platform_crc32(bytes + GLUE_HEADER_SIZE, size - GLUE_HEADER_SIZE, platform_crc32(bytes + GLUE_MAGIC_SIZE, 1, 0))
        != stored)
        return "checksum";
    int index = bytes[GLUE_MAGIC_SIZE];
    *state = index < 16 ? 1 << index : 0;
    return NULL;
}

const char *glue_contradiction(const char *body, size_t n, int model_exchange, int state, int before, int after) {
    int body_model_exchange, initialized = glue_body_phase(body, n, &body_model_exchange);
    return body_model_exchange >= 0 && body_model_exchange != model_exchange
           ? "its body is of the other interface (Model Exchange / Co-Simulation)"
           : initialized == 1 && (state & before) ? "its body is initialized"
           : initialized == 0 && (state & after) ? "its body is not initialized" : NULL;
}
