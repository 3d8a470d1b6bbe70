# NCCOM_SANITIZE="address;undefined" or "thread": applied to every target.
if(NCCOM_SANITIZE)
  list(JOIN NCCOM_SANITIZE "," _nccom_san)
  add_compile_options(-fsanitize=${_nccom_san} -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=${_nccom_san})
  message(STATUS "nccom: sanitizers ${_nccom_san}")
endif()
