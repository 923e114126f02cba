#version 430 core
// Overlay geometry (grid lines, arrows, brush circle, domain) as coloured
// triangles built on the CPU in world units.
layout(location = 0) in vec2 a_pos;
layout(location = 1) in vec4 a_color;
uniform mat4 u_view;
out vec4 v_color;
void main() {
  v_color = a_color;
  gl_Position = u_view * vec4(a_pos, 0.0, 1.0);
}
