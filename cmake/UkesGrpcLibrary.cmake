# ukes_grpc_library(NAME IMPORT_DIR <dir> PROTOS <file>...)
#
# A static library of the protobuf and gRPC C++ code generated from PROTOS, which live under
# IMPORT_DIR and are named relative to it (so `IMPORT_DIR/a/b/c.proto` gives "a/b/c.pb.h", and the
# descriptors carry the name "a/b/c.proto"). CMake 3.25's protobuf_generate puts the source
# directory first on protoc's include path, which would name the files "proto/a/b/c.proto".
# Generated code is not ours: its headers come in as SYSTEM and it gets no warning flags.
function(ukes_grpc_library NAME)
  cmake_parse_arguments(ARG "" "IMPORT_DIR" "PROTOS" ${ARGN})
  set(out "${CMAKE_CURRENT_BINARY_DIR}/${NAME}_generated")
  file(MAKE_DIRECTORY "${out}")
  set(sources)
  foreach(proto IN LISTS ARG_PROTOS)
    file(RELATIVE_PATH rel "${ARG_IMPORT_DIR}" "${proto}")
    string(REGEX REPLACE "\\.proto$" "" stem "${rel}")
    set(generated "${out}/${stem}.pb.h" "${out}/${stem}.pb.cc"
                  "${out}/${stem}.grpc.pb.h" "${out}/${stem}.grpc.pb.cc")
    add_custom_command(
      OUTPUT ${generated}
      COMMAND protobuf::protoc --cpp_out "${out}" --grpc_out "${out}"
              "--plugin=protoc-gen-grpc=$<TARGET_FILE:gRPC::grpc_cpp_plugin>"
              -I "${ARG_IMPORT_DIR}" "${proto}"
      DEPENDS "${proto}" protobuf::protoc gRPC::grpc_cpp_plugin
      COMMENT "Generating C++ protobuf and gRPC code for ${rel}"
      VERBATIM)
    list(APPEND sources ${generated})
  endforeach()
  add_library(${NAME} STATIC ${sources})
  target_include_directories(${NAME} SYSTEM PUBLIC "${out}")
  target_link_libraries(${NAME} PUBLIC protobuf::libprotobuf gRPC::grpc++)
endfunction()
