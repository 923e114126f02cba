#version 430 core
// Round, anti-aliased sprite with a soft darker rim so neighbours stay
// distinguishable; the selected particle gets a white ring.
in vec2 v_uv;
in vec3 v_color;
in float v_radius_px;
flat in int v_selected;
uniform int u_points;
out vec4 o_color;

void main() {
  float d = length(u_points == 1 ? gl_PointCoord * 2.0 - 1.0 : v_uv);                       // 1 at the particle's radius
  float aa = 1.0 / max(v_radius_px, 1.0);       // one pixel, in radius units
  if (v_selected == 1) {
    // Core, a dark gap, then a white ring from 3 to 5.5 pixels out: visible
    // on any colour and over dense neighbours.
    float ring_in = 1.0 + 3.0 * aa, ring_out = 1.0 + 5.5 * aa;
    float outer = 1.0 - smoothstep(ring_out - aa, ring_out, d);
    if (outer <= 0.0) discard;
    vec3 c = mix(vec3(0.04, 0.045, 0.06), vec3(1.0), smoothstep(ring_in - aa, ring_in, d));
    c = mix(c, v_color, 1.0 - smoothstep(1.0 - aa, 1.0, d));
    o_color = vec4(c, outer);
    return;
  }
  float alpha = 1.0 - smoothstep(1.0 - aa, 1.0 + aa * 0.5, d);
  if (alpha <= 0.0) discard;
  float rim = v_radius_px > 3.0 ? smoothstep(0.55, 1.0, d) * 0.35 : 0.0;
  o_color = vec4(v_color * (1.0 - rim), alpha);
}
