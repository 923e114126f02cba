#version 430 core
// A premultiplied RGBA layer (render/cpu/sprite_layer.h) over the viewport
// part of the region it was drawn for that holds sprites: one quad in NDC.
layout(location = 0) in vec2 a_corner;  // [-1, 1]^2
uniform vec4 u_rect;                    // NDC: x0, y0, x1, y1
uniform vec4 u_uv;                      // the same rectangle in the layer texture: u0, v0, u1, v1
out vec2 v_uv;
void main() {
  vec2 t = a_corner * 0.5 + 0.5;
  v_uv = mix(u_uv.xy, u_uv.zw, t);
  gl_Position = vec4(mix(u_rect.xy, u_rect.zw, t), 0.0, 1.0);
}
