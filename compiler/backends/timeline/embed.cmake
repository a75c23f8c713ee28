# embed.cmake - writes timeline.js and timeline.css as C++ string literals
# (TimelineAssets.inc), so that the HTML timeline ppsc writes is one
# self-contained file. Run by the build: cmake -DDIR=... -DOUT=... -P embed.cmake
foreach(asset js css)
  file(READ ${DIR}/timeline.${asset} text)
  string(FIND "${text}" ")pps_asset\"" clash)
  if(NOT clash EQUAL -1)
    message(FATAL_ERROR "timeline.${asset} contains the literal's delimiter")
  endif()
  string(TOUPPER ${asset} upper)
  string(APPEND out "static const char Timeline${upper}[] = R\"pps_asset(${text})pps_asset\";\n")
endforeach()
file(WRITE ${OUT}.tmp "// Generated from compiler/backends/timeline by embed.cmake; do not edit.\n${out}")
file(RENAME ${OUT}.tmp ${OUT})
