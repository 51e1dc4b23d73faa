/*
 * A plain C FMI 2.0 host for fault sequences (tests/test_fmu_faults.py): dlopen(RTLD_NOW | RTLD_LOCAL) as
 * OMSimulator does, no Python in the process. It runs a script of FMI calls, one per line, so a test
 * sees the exact status of every call, and that the process survives the whole sequence.
 * Output per line: "call <line>", the messages it logged ("[STATUS] instance: text"), "=> <STATUS>[ <value>]".
 *
 * Usage: fmi2_fault_host BINARY RESOURCE_URI GUID SCRIPT
 * Script lines (values parsed with strtod: "nan", "inf", "1e308", hex floats):
 *   instantiate | free | setup T0 | enter | exit | terminate | reset
 *   setReal VR X | setInteger VR N | setBoolean VR N | setString VR TEXT | getReal VR | getInteger VR
 *   getBoolean VR | getString VR | doStep T H | cancelStep | getBooleanStatus
 *   setRealNullVr | setRealNullValue | getRealNullValue         (vr or value NULL with nvr = 1)
 *   getState SLOT | setState SLOT | freeState SLOT | copyState DST SRC (the pointer, as a careless host)
 *   setStateNull | freeStateNullPointer | setStateBogus          (NULL, NULL FMUstate*, a pointer never handed out)
 *   serialize SLOT                        (into the blob buffer; prints the size)
 *   deserialize SLOT MODE [ARGS]          MODE: asis | garbage | empty | null | truncate N | replace OLD NEW
 *                                         (replace makes the header's checksum right again: the body's checks)
 *   cycles N [STEPS [STATES]]             N x (instantiate, setup, enter, exit, STEPS doSteps, STATES getFMUstate
 *                                         not freed by the host, terminate, free)
 *   rss                                   resident set size in kB
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmi2Functions.h"
#include "host_dl.h"
#include "host_logger.h"

#ifndef _WIN32
#include <unistd.h>

static long rss_kb(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    long pages = 0, resident = 0;
    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
        fclose(f);
    }
    return resident * (sysconf(_SC_PAGESIZE) / 1024);
}
#endif

/* The first occurrence of `text` in bytes[0..size) (memmem, which Windows lacks), or NULL. */
static char *find_bytes(char *bytes, size_t size, const char *text) {
    size_t n = strlen(text);
    for (size_t i = 0; n <= size && i <= size - n; ++i)
        if (memcmp(bytes + i, text, n) == 0) return bytes + i;
    return NULL;
}

#define SLOTS 16
#define API(F) F(Instantiate) F(FreeInstance) F(SetupExperiment) F(EnterInitializationMode) \
    F(ExitInitializationMode) F(Terminate) F(Reset) F(SetReal) F(SetInteger) F(SetBoolean) F(SetString) F(GetReal) \
    F(GetInteger) F(GetBoolean) F(GetString) F(DoStep) F(CancelStep) F(GetBooleanStatus) F(GetFMUstate) \
    F(SetFMUstate) F(FreeFMUstate) F(SerializedFMUstateSize) F(SerializeFMUstate) F(DeSerializeFMUstate)
#define DECLARE(name) fmi2##name##TYPE *name;
static struct { API(DECLARE) } fmi;

static const char *resources, *guid;
static fmi2CallbackFunctions callbacks = {logger, calloc, free, NULL, NULL};

static fmi2Component instantiate(void) {
    return fmi.Instantiate("host", fmi2CoSimulation, guid, resources, &callbacks, fmi2False, fmi2False);
}

int main(int argc, char **argv) {
    utf8_arguments(&argc, &argv);
    if (argc != 5) {
        fprintf(stderr, "usage: %s BINARY RESOURCE_URI GUID SCRIPT\n", argv[0]);
        return 2;
    }
    resources = argv[2];
    guid = argv[3];
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) { printf("dlopen failed: %s\n", dlerror()); return 2; }
#define RESOLVE(name) if (!(*(void **)&fmi.name = dlsym(lib, "fmi2" #name))) { printf("missing fmi2%s\n", #name); return 2; }
    API(RESOLVE)
    FILE *script = fopen(argv[4], "r");
    if (!script) { printf("cannot open %s\n", argv[4]); return 2; }
    fmi2Component c = NULL;
    fmi2FMUstate slots[SLOTS] = {0};
    char *blob = NULL;
    size_t blob_size = 0;
    char line[4096];
    while (fgets(line, sizeof line, script)) {
        line[strcspn(line, "\n")] = '\0';
        char cmd[64] = "", a[1024] = "", b[1024] = "", d[1024] = "";
        if (sscanf(line, "%63s %1023s %1023s %1023s", cmd, a, b, d) < 1) continue;
        fmi2ValueReference vr = (fmi2ValueReference)strtoul(a, NULL, 10);
        int slot = atoi(a) % SLOTS, has_value = 0;
        char value[1100] = "";
        fmi2Status s = fmi2OK;
        printf("call %s\n", line);
        fflush(stdout);
        if (!strcmp(cmd, "instantiate")) {
            c = instantiate();
            printf("=> %s\n", c ? "OK" : "NULL");
            continue;
        } else if (!strcmp(cmd, "free")) {
            fmi.FreeInstance(c);
            printf("=> done\n");
            continue;
        } else if (!strcmp(cmd, "setup")) s = fmi.SetupExperiment(c, fmi2False, 0.0, strtod(a, NULL), fmi2False, 0.0);
        else if (!strcmp(cmd, "enter")) s = fmi.EnterInitializationMode(c);
        else if (!strcmp(cmd, "exit")) s = fmi.ExitInitializationMode(c);
        else if (!strcmp(cmd, "terminate")) s = fmi.Terminate(c);
        else if (!strcmp(cmd, "reset")) s = fmi.Reset(c);
        else if (!strcmp(cmd, "setReal")) { fmi2Real x = strtod(b, NULL); s = fmi.SetReal(c, &vr, 1, &x); }
        else if (!strcmp(cmd, "setInteger")) { fmi2Integer x = atoi(b); s = fmi.SetInteger(c, &vr, 1, &x); }
        else if (!strcmp(cmd, "setBoolean")) { fmi2Boolean x = atoi(b); s = fmi.SetBoolean(c, &vr, 1, &x); }
        else if (!strcmp(cmd, "setString")) {
            const char *text = line + strlen(cmd) + 1 + strlen(a) + 1;
            s = fmi.SetString(c, &vr, 1, &text);
        } else if (!strcmp(cmd, "getReal")) {
            fmi2Real x = -12345.0;
            s = fmi.GetReal(c, &vr, 1, &x);
            snprintf(value, sizeof value, "%.17g", x), has_value = 1;
        } else if (!strcmp(cmd, "getInteger")) {
            fmi2Integer x = -12345;
            s = fmi.GetInteger(c, &vr, 1, &x);
            snprintf(value, sizeof value, "%d", x), has_value = 1;
        } else if (!strcmp(cmd, "getBoolean")) {
            fmi2Boolean x = -12345;
            s = fmi.GetBoolean(c, &vr, 1, &x);
            snprintf(value, sizeof value, "%d", x), has_value = 1;
        } else if (!strcmp(cmd, "getString")) {
            fmi2String x = NULL;
            s = fmi.GetString(c, &vr, 1, &x);
            snprintf(value, sizeof value, "%.1000s", x ? x : "(null)"), has_value = 1;
        } else if (!strcmp(cmd, "setRealNullVr")) { fmi2Real x = 1.0; s = fmi.SetReal(c, NULL, 1, &x); }
        else if (!strcmp(cmd, "setRealNullValue")) { fmi2ValueReference r = 0; s = fmi.SetReal(c, &r, 1, NULL); }
        else if (!strcmp(cmd, "getRealNullValue")) { fmi2ValueReference r = 0; s = fmi.GetReal(c, &r, 1, NULL); }
        else if (!strcmp(cmd, "doStep")) s = fmi.DoStep(c, strtod(a, NULL), strtod(b, NULL), fmi2True);
        else if (!strcmp(cmd, "cancelStep")) s = fmi.CancelStep(c);
        else if (!strcmp(cmd, "getBooleanStatus")) {
            fmi2Boolean x = -1;
            s = fmi.GetBooleanStatus(c, fmi2Terminated, &x);
            snprintf(value, sizeof value, "%d", x), has_value = 1;
        } else if (!strcmp(cmd, "getState")) s = fmi.GetFMUstate(c, &slots[slot]);
        else if (!strcmp(cmd, "setState")) s = fmi.SetFMUstate(c, slots[slot]);
        else if (!strcmp(cmd, "freeState")) s = fmi.FreeFMUstate(c, &slots[slot]);
        else if (!strcmp(cmd, "copyState")) { slots[slot] = slots[atoi(b) % SLOTS]; printf("=> done\n"); continue; }
        else if (!strcmp(cmd, "setStateNull")) s = fmi.SetFMUstate(c, NULL);
        else if (!strcmp(cmd, "freeStateNullPointer")) s = fmi.FreeFMUstate(c, NULL);
        else if (!strcmp(cmd, "setStateBogus")) { static char bogus[64]; s = fmi.SetFMUstate(c, bogus); }
        else if (!strcmp(cmd, "serialize")) {
            size_t size = 0;
            s = fmi.SerializedFMUstateSize(c, slots[slot], &size);
            if (s <= fmi2Warning) {
                free(blob);
                blob = malloc(size + 1);
                blob_size = size;
                s = fmi.SerializeFMUstate(c, slots[slot], blob, size);
            }
            snprintf(value, sizeof value, "%zu", size), has_value = 1;
        } else if (!strcmp(cmd, "deserialize")) {
            char *bytes = malloc(blob_size + 2048);
            size_t size = blob_size;
            if (blob) memcpy(bytes, blob, blob_size);
            if (!strcmp(b, "garbage")) {
                size = 300;
                for (size_t i = 0; i < size; ++i) bytes[i] = (char)(i * 7919 + 13);
            } else if (!strcmp(b, "empty")) size = 0;
            else if (!strcmp(b, "truncate")) size = strtoul(d, NULL, 10) < size ? strtoul(d, NULL, 10) : size;
            else if (!strcmp(b, "replace")) { /* replace the first OLD by NEW (the rest of the line) */
                const char *replacement = strstr(line, d) + strlen(d) + 1;
                char *at = find_bytes(bytes, size, d);
                if (at) {
                    size_t tail = size - (at - bytes) - strlen(d), n = strlen(replacement);
                    memmove(at + n, at + strlen(d), tail);
                    memcpy(at, replacement, n);
                    size = size - strlen(d) + n;
                    if (size > 13) { /* the header's CRC-32 (of the FMI state byte and the body) made right again */
                        uint32_t crc = ~0u;
                        for (size_t i = 8; i < size; i += i == 8 ? 5 : 1) {
                            crc ^= (unsigned char)bytes[i];
                            for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
                        }
                        crc = ~crc;
                        for (int k = 0; k < 4; ++k) bytes[9 + k] = (char)(crc >> (8 * k));
                    }
                }
            }
            s = fmi.DeSerializeFMUstate(c, !strcmp(b, "null") ? NULL : bytes, size, &slots[slot]);
            free(bytes);
        } else if (!strcmp(cmd, "cycles")) {
            int n = atoi(a), steps = b[0] ? atoi(b) : 10, states = d[0] ? atoi(d) : 0;
            for (int i = 0; i < n; ++i) {
                fmi2Component x = instantiate();
                if (!x) { printf("instantiate failed\n"); return 1; }
                fmi2Status worst = fmi.SetupExperiment(x, fmi2False, 0.0, 0.0, fmi2False, 0.0);
                fmi2Status t = fmi.EnterInitializationMode(x); if (t > worst) worst = t;
                t = fmi.ExitInitializationMode(x); if (t > worst) worst = t;
                for (int k = 0; k < steps; ++k) { t = fmi.DoStep(x, k * 1e-3, 1e-3, fmi2True); if (t > worst) worst = t; }
                for (int k = 0; k < states; ++k) { /* left for fmi2FreeInstance to free */
                    fmi2FMUstate state = NULL;
                    t = fmi.GetFMUstate(x, &state); if (t > worst) worst = t;
                }
                t = fmi.Terminate(x); if (t > worst) worst = t;
                fmi.FreeInstance(x);
                if (worst > fmi2Warning) { printf("cycle %d failed: %s\n", i, STATUS[worst]); return 1; }
            }
            printf("=> OK %ld\n", rss_kb());
            continue;
        } else if (!strcmp(cmd, "rss")) { printf("=> OK %ld\n", rss_kb()); continue; }
        else { printf("unknown command\n"); return 2; }
        printf(has_value ? "=> %s %s\n" : "=> %s\n", s <= fmi2Pending ? STATUS[s] : "?", value);
        fflush(stdout);
    }
    printf("end\n");
    free(blob);
    return 0;
}
