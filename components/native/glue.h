/* What every FMI version's glue layer keeps alike (glue.c). */
#ifndef MECHFMU_GLUE_H
#define MECHFMU_GLUE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* The live instances of this process: a host's handle is found in O(1) without a lock and without reading through
 * it (a freed or foreign pointer is only compared); adding and removing take a lock (glue.c). */
int glue_add(void *instance);          /* 0, or -1 when out of memory */
int glue_remove(const void *instance); /* 1, or 0 if it was not live (freed twice, or not ours) */

/* The set: open addressing with linear probing. Every call looks its handle up, so lookups take no lock: a slot
 * never becomes empty again (a removed instance leaves GLUE_FREED, a tombstone, which a later instance may take), so
 * a probe that stops at an empty slot has passed every instance added before the call began. A table more than half
 * used (instances and tombstones) is replaced by a new one of the live instances, published atomically; the old ones
 * are kept for the life of the process (a lookup may still be reading one), in a list. The lookup is inline here:
 * it is the first thing of every call, and a call to it would keep the call's arguments across it. */
typedef struct GlueTable {
    struct GlueTable *retired; /* the table before this one */
    size_t capacity;           /* a power of two */
    size_t used;               /* slots not empty: instances and tombstones */
    _Atomic(void *) slots[];
} GlueTable;
extern _Atomic(GlueTable *) glue_live; /* NULL before the first instance */
extern char glue_freed_slot;
#define GLUE_FREED ((void *)&glue_freed_slot)

static inline size_t glue_home_slot(const void *p, size_t capacity) {
    uint64_t x = (uint64_t)(uintptr_t)p; /* a 64-bit mix (MurmurHash3's finalizer): allocation addresses */
    x ^= x >> 33;                         /* share their low bits */
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (size_t)x & (capacity - 1);
}

/* The slot holding `p`, or the empty slot where its probe ends. */
static inline size_t glue_find_slot(GlueTable *table, const void *p) {
    size_t i = glue_home_slot(p, table->capacity);
    for (;;) {
        void *slot = atomic_load_explicit(&table->slots[i], memory_order_acquire);
        if (!slot || slot == p) return i;
        i = (i + 1) & (table->capacity - 1);
    }
}

/* The instance behind a host's handle, or NULL for a handle that is not (or no more) a live instance. */
static inline void *glue_find(const void *handle) {
    GlueTable *table = atomic_load_explicit(&glue_live, memory_order_acquire);
    if (!handle || !table) return NULL;
    void *w = atomic_load_explicit(&table->slots[glue_find_slot(table, handle)], memory_order_acquire);
    return w == GLUE_FREED ? NULL : w;
}

/* The phase a serialized state's body holds, as the runtime serializes it: 1 initialized, 0 not, -1 not known;
 * *model_exchange likewise (1 taken in Model Exchange use). */
int glue_body_phase(const char *body, size_t n, int *model_exchange);

/* Whether `token` is the one this FMU was packed with (resources/mechfmu_guid.txt in the resources `folder`, written
 * with modelDescription.xml, so a host need not unpack the model description): 0, or -1 with `why` naming the
 * token as the standard does (fmuGUID, instantiationToken), what it is (GUID, instantiation token) and the folder's argument (fmuResourceLocation,
 * resourcePath). */
int glue_check_token(const char *folder, const char *token, const char *token_name, const char *noun,
                     const char *location_name, char *why, size_t size);

/* Valid UTF-8 (a String value: the runtime keeps texts as UTF-8, messages quote them). */
int glue_utf8_valid(const unsigned char *s);
/* Whether a message of `category` goes to the host (an info only with debug logging, for its categories; NULL
 * categories: every one). */
int glue_category_enabled(int debug_logging, char *const *categories, size_t n, const char *category);

/* A serialized FMU state: a header (the glue's 8-byte magic, the FMI state's bit index, the CRC-32 of that index and
 * the body, 4 bytes little-endian), then the runtime's body; a state changed after it was serialized is refused
 * whole. `state` is the glue's one-bit FMI state. */
#define GLUE_MAGIC_SIZE 8
#define GLUE_HEADER_SIZE (GLUE_MAGIC_SIZE + 1 + 4)
void glue_write_state(unsigned char *out, const char *magic, int state, const char *body, size_t n);
/* NULL with *state (0 for an index beyond 15), or "no mechfmu state header" or "checksum": what is wrong. */
const char *glue_read_state(const unsigned char *bytes, size_t size, const char *magic, int *state);
/* Why a checked body contradicts its header's `state` or the instance (`model_exchange`): taken in the other
 * interface, initialized in a state of `before`, or not in one of `after`; NULL if it does not. */
const char *glue_contradiction(const char *body, size_t n, int model_exchange, int state, int before, int after);

#endif
