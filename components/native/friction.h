/* MSL's friction modes as the friction laws hold them (friction.c, mass_friction.c): the constants of
 * Interfaces.PartialFriction and the discrete state in five slots of the hidden state. */
#ifndef MECHFMU_NATIVE_FRICTION_H
#define MECHFMU_NATIVE_FRICTION_H

enum { BACKWARD = -1, STUCK = 0, FORWARD = 1, FREE = 2, UNKNOWN = 3 };

typedef struct {
    int mode, locked, start_forward, start_backward, free;
} Modes;

/* the mode held (a value that is none of MSL's modes, which a law's validate refuses in a restored state, as
 * unknown: no out-of-range conversion) */
static inline int held_mode(double mode) {
    return mode == BACKWARD ? BACKWARD : mode == STUCK ? STUCK : mode == FORWARD ? FORWARD : mode == FREE ? FREE
                                                                                                      : UNKNOWN;
}

/* the discrete state in the slots (mode, locked, startForward, startBackward, free) from `slots` */
static inline Modes held_modes(const double *slots) {
    return (Modes){held_mode(slots[0]), slots[1] != 0.0, slots[2] != 0.0, slots[3] != 0.0, slots[4] != 0.0};
}

#endif
