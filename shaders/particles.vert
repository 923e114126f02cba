#version 430 core
// Particles as instanced round sprites: one quad per particle, sized by its
// radius (half the particle spacing), coloured by the current colour mode.
layout(location = 0) in vec2 a_corner;   // quad corner in [-1, 1]^2
layout(location = 1) in vec2 a_pos;      // world position
layout(location = 2) in vec2 a_vel;      // world velocity
layout(location = 3) in float a_scalar;  // scalar field (speed, J, stress, ...)
layout(location = 4) in vec4 a_color;    // base colour (material or group)
layout(location = 5) in float a_radius;  // world radius

uniform mat4 u_view;           // world -> NDC
uniform float u_px_per_world;  // framebuffer pixels per world unit
uniform float u_size_scale;    // user sprite scale
uniform int u_mode;            // 0 base colour, 1 scalar + colour map, 2 velocity direction
uniform vec2 u_range;          // scalar range mapped to [0, 1]
uniform sampler1D u_cmap;
uniform int u_selected;        // instance index of the selected particle, or -1
uniform int u_points;          // 1: drawn as GL_POINTS (one vertex a particle), 0: instanced quads

out vec2 v_uv;
out vec3 v_color;
out float v_radius_px;
flat out int v_selected;

vec3 hue(float h) {
  return clamp(vec3(abs(h * 6.0 - 3.0) - 1.0, 2.0 - abs(h * 6.0 - 2.0), 2.0 - abs(h * 6.0 - 4.0)), 0.0, 1.0);
}

void main() {
  // Never smaller than a pixel in radius, so zoomed-out scenes stay visible.
  float r_px = max(a_radius * u_size_scale * u_px_per_world, 1.0);
  bool sel = gl_InstanceID == u_selected;
  // The selected particle's quad also holds a ring 3 to 6 pixels outside it.
  float grow = sel ? (r_px + 6.0) / r_px : 1.0;
  float r_world = r_px * grow / u_px_per_world;
  v_uv = a_corner * grow;
  v_radius_px = r_px;
  v_selected = sel ? 1 : 0;
  if (u_mode == 1) {
    float t = (a_scalar - u_range.x) / max(u_range.y - u_range.x, 1e-20);
    v_color = texture(u_cmap, clamp(t, 0.0, 1.0) * (255.0 / 256.0) + 0.5 / 256.0).rgb;
  } else if (u_mode == 2) {
    float h = atan(a_vel.y, a_vel.x) / 6.2831853;
    v_color = hue(h < 0.0 ? h + 1.0 : h);
  } else {
    v_color = a_color.rgb;
  }
  if (u_points == 1) {
    gl_PointSize = 2.0 * r_px;
    gl_Position = u_view * vec4(a_pos, 0.0, 1.0);
  } else {
    gl_Position = u_view * vec4(a_pos + a_corner * r_world, 0.0, 1.0);
  }
}
