#version 430 core
in vec2 v_uv;
uniform sampler2D u_layer;
out vec4 o_color;
void main() { o_color = texture(u_layer, v_uv); }
