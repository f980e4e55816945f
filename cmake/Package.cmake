# The Debian package (scripts/package; docs/install.md): CPack's DEB generator.
#   /usr/bin/salttap
#   /lib/systemd/system/salttap.service
#   /etc/salttap/salttap.yaml                      (a conffile: upgrades keep local edits)
#   /usr/share/salttap/{mappings,dashboards,alerting,prometheus}
#   /usr/share/salttap/salt/{reactor,formula}     (the remediation reactor and the Salt formula)
#   /usr/share/doc/salttap/{copyright,changelog.gz,install.md}, /usr/share/man/man1/salttap.1.gz
# Depends comes from dpkg-shlibdeps (the libraries the binary links), plus
# adduser for the postinst and procps for the unit's ExecReload (/bin/kill).
include(GNUInstallDirs)

set(SALTTAP_PACKAGE_MAINTAINER "salttap maintainers <maintainers@salttap.example>" CACHE STRING
    "Maintainer field of the Debian package")

install(TARGETS salttap RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES deploy/systemd/salttap.service DESTINATION /lib/systemd/system)
install(FILES deploy/salttap.yaml DESTINATION /etc/salttap)
install(DIRECTORY mappings/ DESTINATION ${CMAKE_INSTALL_DATADIR}/salttap/mappings FILES_MATCHING PATTERN "*.json")
install(DIRECTORY deploy/kibana deploy/opensearch-dashboards DESTINATION ${CMAKE_INSTALL_DATADIR}/salttap/dashboards)
install(DIRECTORY deploy/alerting/ DESTINATION ${CMAKE_INSTALL_DATADIR}/salttap/alerting)
install(FILES deploy/prometheus/salttap-rules.yml DESTINATION ${CMAKE_INSTALL_DATADIR}/salttap/prometheus)
install(FILES deploy/salt/reactor/salttap_rerun.sls DESTINATION ${CMAKE_INSTALL_DATADIR}/salttap/salt/reactor)
install(DIRECTORY deploy/salt/formula/ DESTINATION ${CMAKE_INSTALL_DATADIR}/salttap/salt/formula)

# Debian wants the changelog compressed with gzip -9n (no name, no timestamp).
set(SALTTAP_PACKAGE_VERSION ${PROJECT_VERSION})
set(_debian_doc "${PROJECT_BINARY_DIR}/debian-doc")
configure_file(deploy/debian/changelog.in "${_debian_doc}/changelog" @ONLY)
execute_process(COMMAND gzip -9nf "${_debian_doc}/changelog" RESULT_VARIABLE _gzip_rc)
if(NOT _gzip_rc EQUAL 0)
  message(FATAL_ERROR "gzip of the package changelog failed")
endif()
install(FILES deploy/debian/copyright "${_debian_doc}/changelog.gz" docs/install.md
        DESTINATION ${CMAKE_INSTALL_DOCDIR})
configure_file(deploy/debian/salttap.1 "${_debian_doc}/salttap.1" COPYONLY)
execute_process(COMMAND gzip -9nf "${_debian_doc}/salttap.1" RESULT_VARIABLE _gzip_rc)
if(NOT _gzip_rc EQUAL 0)
  message(FATAL_ERROR "gzip of the manual page failed")
endif()
install(FILES "${_debian_doc}/salttap.1.gz" DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME salttap)
set(CPACK_PACKAGE_VERSION ${SALTTAP_PACKAGE_VERSION})
set(CPACK_PACKAGE_CONTACT "${SALTTAP_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME "salttap_${SALTTAP_PACKAGE_VERSION}_amd64.deb")
set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE amd64)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "adduser, procps")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "salt-master")
set(CPACK_DEBIAN_COMPRESSION_TYPE xz)
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Salt job, return and event indexer for Elasticsearch / OpenSearch")
# The extended description (CPack writes the summary as the synopsis line).
set(CPACK_PACKAGE_DESCRIPTION "salttap runs beside a salt-master and taps its event bus. For every job it
decides which minions succeeded, failed or never returned, audits who ran
what, alerts on failed, missing and risky jobs, and indexes jobs, returns,
states, events and alerts into Elasticsearch or OpenSearch through a
crash-safe disk spool.")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    "${PROJECT_SOURCE_DIR}/deploy/debian/conffiles;${PROJECT_SOURCE_DIR}/deploy/debian/postinst;${PROJECT_SOURCE_DIR}/deploy/debian/prerm;${PROJECT_SOURCE_DIR}/deploy/debian/postrm")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_OUTPUT_FILE_PREFIX "${PROJECT_SOURCE_DIR}/build/package")
include(CPack)
