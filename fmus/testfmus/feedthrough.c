/* Feedthrough of every type: each output equals its input (`scaled` = gain * real_c);
 * the discrete inputs and the tunable gain can only be set in event mode in model
 * exchange, as the standard says. No states, no events. */
#include "feedthrough_vars.h"

void tf_model_init(TfSnapshot *s) { s->next_defined = 0; }
void tf_model_derivatives(TfSnapshot *s) { (void)s; }

void tf_model_outputs(TfSnapshot *s)
{
    s->r[V_real_c_out] = s->r[V_real_c_in];
    s->r[V_real_d_out] = s->r[V_real_d_in];
    s->r[V_scaled] = s->r[V_gain] * s->r[V_real_c_in];
    s->r[V_f32_out] = (float)s->r[V_f32_in];
    s->i[V_int_out] = s->i[V_int_in];
    s->i[V_i8_out] = s->i[V_i8_in];
    s->i[V_u8_out] = s->i[V_u8_in];
    s->i[V_i16_out] = s->i[V_i16_in];
    s->i[V_u16_out] = s->i[V_u16_in];
    s->i[V_u32_out] = s->i[V_u32_in];
    s->i[V_i64_out] = s->i[V_i64_in];
    s->u[V_u64_out] = s->u[V_u64_in];
    s->b[V_bool_out] = s->b[V_bool_in];
    s->i[V_enum_out] = s->i[V_enum_in];
}

void tf_model_indicators(const TfSnapshot *s, double *z) { (void)s; (void)z; }
void tf_model_event(TfSnapshot *s) { (void)s; }
