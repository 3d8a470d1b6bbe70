# NCCOM_SANITIZE="address;undefined" or "thread": applied to every target.
if(NCCOM_SANITIZE)
  list(JOIN NCCOM_SANITIZE "," _nccom_san)
  # -O1: the sanitizers' own advice for usable speed (the suites run in CI);
  # asserts stay on (Debug, no NDEBUG).
  add_compile_options(-fsanitize=${_nccom_san} -fno-omit-frame-pointer -fno-sanitize-recover=undefined -O1)
  add_link_options(-fsanitize=${_nccom_san})
  message(STATUS "nccom: sanitizers ${_nccom_san}")
endif()
