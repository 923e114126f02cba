#version 430 core
// A premultiplied RGBA layer (render/cpu/sprite_layer.h) over the viewport
// region it was drawn for: one quad in NDC.
layout(location = 0) in vec2 a_corner;  // [-1, 1]^2
uniform vec4 u_rect;                    // NDC: x0, y0, x1, y1
out vec2 v_uv;
void main() {
  vec2 t = a_corner * 0.5 + 0.5;
  v_uv = t;
  gl_Position = vec4(mix(u_rect.xy, u_rect.zw, t), 0.0, 1.0);
}
