/* Bouncing ball (state events): h' = v, v' = -g; when h crosses 0 going down,
 * v := -e v and the bounce is counted and timed (bounces, t_bounce). Event indicator
 * z = h (FMI 3: the local variable z). */
#include "bouncingball_vars.h"

void tf_model_init(TfSnapshot *s) { s->next_defined = 0; }

void tf_model_derivatives(TfSnapshot *s)
{
    s->r[V_der_h] = s->r[V_v];
    s->r[V_der_v] = -s->r[V_g];
}

void tf_model_outputs(TfSnapshot *s) { s->r[V_z] = s->r[V_h]; }

void tf_model_indicators(const TfSnapshot *s, double *z) { z[0] = s->r[V_h]; }

void tf_model_event(TfSnapshot *s)
{
    if (s->r[V_h] <= 0.0 && s->r[V_v] < 0.0) {
        s->r[V_h] = 0.0;
        s->r[V_v] = -s->r[V_e] * s->r[V_v];
        s->i[V_bounces] += 1;
        s->r[V_t_bounce] = s->time;
    }
}
