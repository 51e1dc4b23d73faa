/* SmoothSphereHalfSpaceForce (components/smooth_sphere_half_space.py: Simbody's law, its parameters and sources). */
#include <math.h>
#include <stdio.h>

#include "fmi2_native.h"
#include "native_variables.h"
#include "spatial.h"

#define V(name) n->values[SmoothSphereHalfSpaceForce__##name]

typedef struct {
    Vec position, velocity, angular_velocity;
    Mat rotation;
} Body;

/* a body's pose and velocity from its 13 inputs (position, orientation w x y z, velocity, angular velocity) */
static int body(NativeInstance *n, int first, const char *prefix, Body *b) {
    const double *v = n->values + first;
    const double *q = v + 3;
    if (0.0 + q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3] == 0.0) {
        char name[64], text[512], w[40], x[40], y[40], z[40];
        native_repr(q[0], w, sizeof w), native_repr(q[1], x, sizeof x), native_repr(q[2], y, sizeof y);
        native_repr(q[3], z, sizeof z);
        snprintf(name, sizeof name, "%s.orientation", prefix);
        snprintf(text, sizeof text, "%s '%s': %s = (%s, %s, %s, %s) is not a rotation quaternion", n->cls->name,
                 native_instance_name(n), name, w, x, y, z);
        return native_fail_text(n, 0, "%s", text);
    }
    double unit[4];
    quat_normalize(q, unit);
    quat_to_matrix(unit, b->rotation);
    for (int i = 0; i < 3; ++i) b->position[i] = v[i], b->velocity[i] = v[7 + i], b->angular_velocity[i] = v[10 + i];
    return 0;
}

static void station_velocity(const Body *b, const double *point, double *out) {
    Vec arm, spin;
    vec_sub(point, b->position, arm);
    vec_cross(b->angular_velocity, arm, spin);
    vec_add(b->velocity, spin, out);
}

int native_SmoothSphereHalfSpaceForce_outputs(NativeInstance *n, double *out) {
    Body sphere, half_space;
    if (body(n, SmoothSphereHalfSpaceForce__sphere_position_x, "sphere", &sphere) != 0
        || body(n, SmoothSphereHalfSpaceForce__halfSpace_position_x, "halfSpace", &half_space) != 0)
        return -1;
    Mat half_space_rotation;
    body_xyz_rotation(V(halfSpaceOrientation_x), V(halfSpaceOrientation_y), V(halfSpaceOrientation_z),
                      half_space_rotation);
    const double *sphere_location = &V(sphereLocation_x), *half_space_location = &V(halfSpaceLocation_x);
    const double radius = V(radius), cf = V(constantContactForce), c = V(dissipation);
    Vec centre, centre_in_half_space, x_h, normal, point, t1, t2, v, v_tangent, force;
    mat_vec(sphere.rotation, sphere_location, t1);
    vec_add(sphere.position, t1, centre);
    vec_sub(centre, half_space.position, t1);
    mat_t_vec(half_space.rotation, t1, centre_in_half_space);
    mat_column(half_space_rotation, 0, x_h);
    vec_sub(centre_in_half_space, half_space_location, t1);
    vec_scale(-1.0, x_h, t2);
    const double indentation = -(vec_dot(t1, t2) - radius);
    mat_vec(half_space.rotation, x_h, normal);
    vec_scale(radius, normal, t1);
    vec_add(centre, t1, t1);
    vec_scale(0.5 * indentation, normal, t2);
    vec_sub(t1, t2, point);
    station_velocity(&sphere, point, t1);
    station_velocity(&half_space, point, t2);
    vec_sub(t1, t2, v);
    const double v_normal = vec_dot(v, normal);
    vec_scale(v_normal, normal, t1);
    vec_sub(v, t1, v_tangent);
    double power, k;
    if (native_pow(n, V(stiffness), 2.0 / 3.0, &power) != 0) return -1;
    k = 0.5 * power;
    double smoothed_root;
    if (native_pow(n, sqrt(indentation * indentation + cf), 1.5, &smoothed_root) != 0) return -1;
    const double fh_pos = (4.0 / 3.0) * k * sqrt(radius * k) * smoothed_root;
    const double fh_smooth = fh_pos * (0.5 + 0.5 * tanh(V(hertzSmoothing) * indentation));
    const double pe = 0.4 * fh_smooth * indentation;
    const double fhc_pos = fh_smooth * (1.0 + 1.5 * c * v_normal);
    const double on = c == 0 ? 1.0 : 0.5 + 0.5 * tanh(V(huntCrossleySmoothing) * (v_normal + 2.0 / (3.0 * c)));
    const double fhc_smooth = fhc_pos * on;
    vec_scale(fhc_smooth, normal, force);
    double v_slip;
    if (native_pow(n, vec_dot(v_tangent, v_tangent) + cf, 0.5, &v_slip) != 0) return -1;
    const double v_rel = v_slip / V(transitionVelocity);
    const double mu_s = V(staticFriction), mu_d = V(dynamicFriction);
    const double ff = fhc_smooth * ((1.0 < v_rel ? 1.0 : v_rel) * (mu_d + 2 * (mu_s - mu_d) / (1 + v_rel * v_rel))
                                    + V(viscousFriction) * v_slip);
    if (v_slip == 0.0) return native_fail_text(n, 1, "float division by zero");
    vec_scale(ff, v_tangent, t1);
    vec_scale(1.0 / v_slip, t1, t1);
    vec_add(force, t1, force);
    Vec on_sphere, arm;
    vec_scale(-1.0, force, on_sphere);
    out[0] = on_sphere[0], out[1] = on_sphere[1], out[2] = on_sphere[2];
    vec_sub(point, sphere.position, arm);
    vec_cross(arm, on_sphere, out + 3);
    out[6] = force[0], out[7] = force[1], out[8] = force[2];
    vec_sub(point, half_space.position, arm);
    vec_cross(arm, force, out + 9);
    out[12] = indentation;
    out[13] = point[0], out[14] = point[1], out[15] = point[2];
    out[16] = v_slip, out[17] = fhc_smooth, out[18] = pe, out[19] = -indentation;
    return 0;
}
