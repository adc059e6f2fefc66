# cronwheel_embed_files(<target> SYMBOL <name> BASE <dir> FILES <f>...)
# Compiles the given files into <target> as a table of {path relative to BASE, bytes}, regenerated at
# build time when any file changes. Used for the SQL migrations and the web console, so the binaries are
# self-contained. HEADER must declare, in NAMESPACE,
#   struct EmbeddedFile { std::string_view path; std::string_view data; };
#   std::span<const EmbeddedFile> <SYMBOL>();
set(CRONWHEEL_EMBED_SCRIPT "${CMAKE_CURRENT_LIST_DIR}/EmbedFilesScript.cmake")

function(cronwheel_embed_files target)
  cmake_parse_arguments(ARG "" "SYMBOL;BASE;NAMESPACE;HEADER" "FILES" ${ARGN})
  set(out "${CMAKE_CURRENT_BINARY_DIR}/${ARG_SYMBOL}_embedded.cpp")
  string(REPLACE ";" "|" files_arg "${ARG_FILES}")
  add_custom_command(
    OUTPUT "${out}"
    COMMAND ${CMAKE_COMMAND} -DOUT=${out} -DSYMBOL=${ARG_SYMBOL} -DNAMESPACE=${ARG_NAMESPACE}
            -DBASE=${ARG_BASE} -DHEADER=${ARG_HEADER} "-DFILES=${files_arg}" -P "${CRONWHEEL_EMBED_SCRIPT}"
    DEPENDS ${ARG_FILES} "${CRONWHEEL_EMBED_SCRIPT}"
    COMMENT "Embedding ${ARG_SYMBOL}"
    VERBATIM)
  target_sources(${target} PRIVATE "${out}")
endfunction()
