# Window dependencies, all from Debian packages: GLFW 3.3 and Dear ImGui 1.86
# (libimgui-dev ships the GLFW/OpenGL3 backends inside libimgui.a) through
# pkg-config, GLM headers, and a glad 2 OpenGL 4.3 core loader generated at
# build time (python3-glad) into the build tree: nothing third-party is copied.
set(_ps_window_ok ON)
if(NOT PkgConfig_FOUND)
  set(_ps_window_ok OFF)
else()
  pkg_check_modules(GLFW3 IMPORTED_TARGET glfw3)
  pkg_check_modules(IMGUI IMPORTED_TARGET imgui)
  if(NOT GLFW3_FOUND OR NOT IMGUI_FOUND)
    set(_ps_window_ok OFF)
  endif()
endif()
find_path(PS_GLM_INCLUDE glm/glm.hpp)
find_program(PS_GLAD glad)
find_package(OpenGL QUIET)
# EGL and Xlib for `gui --gl egl` (optional; found by hand: FindOpenGL's component handling
# differs between CMake versions).
find_path(PS_EGL_INCLUDE EGL/egl.h)
find_library(PS_EGL_LIB EGL)
find_path(PS_X11_INCLUDE X11/Xlib.h)
find_library(PS_X11_LIB X11)
if(NOT PS_GLM_INCLUDE OR NOT PS_GLAD OR NOT OpenGL_FOUND)
  set(_ps_window_ok OFF)
  message(STATUS "Particle Sandbox window: GLFW ${GLFW3_FOUND}, ImGui ${IMGUI_FOUND}, GLM ${PS_GLM_INCLUDE}, "
                 "glad ${PS_GLAD}, OpenGL ${OpenGL_FOUND}")
endif()

if(NOT _ps_window_ok)
  if(PS_WINDOW STREQUAL "ON")
    message(FATAL_ERROR "PS_WINDOW=ON but GLFW, ImGui, GLM, OpenGL or glad is missing "
                        "(apt-get install libglfw3-dev libimgui-dev libglm-dev python3-glad)")
  endif()
  return()
endif()

set(PS_GLAD_DIR ${CMAKE_BINARY_DIR}/glad)
add_custom_command(
  OUTPUT ${PS_GLAD_DIR}/src/gl.c ${PS_GLAD_DIR}/include/glad/gl.h
  COMMAND ${PS_GLAD} --quiet --reproducible --api gl:core=4.3 --extensions= --out-path ${PS_GLAD_DIR} c
  COMMENT "Generating the OpenGL 4.3 core loader with glad"
  VERBATIM)
add_library(glad STATIC ${PS_GLAD_DIR}/src/gl.c)
target_include_directories(glad PUBLIC ${PS_GLAD_DIR}/include)
target_link_libraries(glad PUBLIC ${CMAKE_DL_LIBS})

# The window: the loop and the common panels, the features (render/feature.h, registered in
# features.cpp), the panels still in App, GL drawing and capture.
set(PS_RENDER_GL_SOURCES
    window_app.cpp window_panels.cpp build_progress.cpp soak.cpp
    features.cpp feature_browser.cpp feature_field.cpp feature_heat.cpp feature_resampling.cpp
    feature_rigid.cpp feature_dem.cpp feature_sgf.cpp feature_rewind.cpp
    panel_compare.cpp panel_lesson.cpp panel_rewind.cpp panel_sgf.cpp sgf_timeline.cpp panel_specimen.cpp
    dem_draw.cpp gl_context.cpp gl_draw.cpp recorder.cpp)
list(TRANSFORM PS_RENDER_GL_SOURCES PREPEND ${CMAKE_SOURCE_DIR}/render/)
add_library(render_gl STATIC ${PS_RENDER_GL_SOURCES})
target_include_directories(render_gl PUBLIC ${PS_GLM_INCLUDE})
target_link_libraries(render_gl PUBLIC sim render_cpu glad PkgConfig::IMGUI PkgConfig::GLFW3 OpenGL::GL)
target_compile_definitions(render_gl PUBLIC PS_SHADER_DIR="${CMAKE_SOURCE_DIR}/shaders")
# `gui --gl egl` (render/gl_context.h): OpenGL through EGL on a GPU with no display, frames put
# into the X window; needs EGL (libegl-dev) and Xlib (libx11-dev).
if(PS_EGL_INCLUDE AND PS_EGL_LIB AND PS_X11_INCLUDE AND PS_X11_LIB)
  target_compile_definitions(render_gl PRIVATE PS_HAVE_EGL=1)
  target_include_directories(render_gl PRIVATE ${PS_EGL_INCLUDE} ${PS_X11_INCLUDE})
  target_link_libraries(render_gl PUBLIC ${PS_EGL_LIB} ${PS_X11_LIB})
endif()
# CUDA-GL interop for the MPM particle buffers (render/cuda/particle_interop.h):
# compiled with CUDA, else a no-CUDA build of it that always leaves drawing to the host path.
if(PS_HAVE_CUDA)
  target_sources(render_gl PRIVATE ${CMAKE_SOURCE_DIR}/render/cuda/particle_interop.cu)
  target_link_libraries(render_gl PUBLIC render_cuda)
  target_compile_definitions(render_gl PUBLIC PS_HAVE_CUDA_INTEROP=1)
  target_compile_options(render_gl PRIVATE
                         $<$<COMPILE_LANGUAGE:CUDA>:--fmad=false --expt-relaxed-constexpr -lineinfo -Xcompiler=-Wall,-Wextra>)
else()
  target_sources(render_gl PRIVATE ${CMAKE_SOURCE_DIR}/render/cuda/particle_interop_off.cpp)
endif()
set(PS_HAVE_WINDOW ON)
