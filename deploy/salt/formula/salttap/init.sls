{#-
  salttap on a salt-master: the package (a .deb from pillar, or an apt
  repository), /etc/salttap/salttap.yaml from pillar salttap:config (checked by
  `salttap check-config` before it replaces the old one), and the service,
  restarted when the config or the package changes. Optionally the
  remediation reactor's master.d file. docs/install.md#the-salt-formula.
-#}
{%- from tpldir ~ '/map.jinja' import salttap with context %}

{%- if salttap.package.manage %}
{%-   if salttap.package.source %}
salttap-package:
  pkg.installed:
    - sources:
      - {{ salttap.package.name }}: {{ salttap.package.source | json }}
{%-   else %}
{%-     if salttap.repo.name %}
salttap-repo:
  pkgrepo.managed:
    - name: {{ salttap.repo.name | json }}
    - file: {{ salttap.repo.file | json }}
{%-       if salttap.repo.key_url %}
    - key_url: {{ salttap.repo.key_url | json }}
{%-       endif %}
{%-       if salttap.repo.signedby %}
    - signedby: {{ salttap.repo.signedby | json }}
{%-       endif %}
    - require_in:
      - pkg: salttap-package
{%-     endif %}
salttap-package:
  pkg.installed:
    - name: {{ salttap.package.name }}
    - refresh: {{ salttap.repo.name != '' }}
{%-     if salttap.package.version %}
    - version: {{ salttap.package.version | json }}
{%-     endif %}
{%-   endif %}
{%- endif %}

salttap-config:
  file.managed:
    - name: {{ salttap.config_file | json }}
    - source: salt://{{ tpldir }}/files/salttap.yaml.jinja
    - template: jinja
    - context:
        config: {{ salttap.config | json }}
    - user: {{ salttap.config_user | json }}
    - group: {{ salttap.config_group | json }}
    - mode: {{ salttap.config_mode | json }}
    - makedirs: true
{%- if salttap.check_cmd %}
    - check_cmd: {{ salttap.check_cmd | json }}
{%- endif %}
{%- if salttap.package.manage %}
    - require:
      - pkg: salttap-package
{%- endif %}

{%- if salttap.service.manage %}
salttap-service:
  service.running:
    - name: {{ salttap.service.name }}
    - enable: {{ salttap.service.enable }}
    - watch:
      - file: salttap-config
{%-   if salttap.package.manage %}
      - pkg: salttap-package
{%-   endif %}
{%- endif %}

{%- if salttap.rerun %}
salttap-rerun-master-conf:
  file.serialize:
    - name: {{ (salttap.master_d ~ '/' ~ salttap.rerun_conf) | json }}
    - serializer: yaml
    - makedirs: true
    - mode: '0644'
    - dataset:
        reactor:
          - 'salttap/alert/failed/*':
            - {{ salttap.reactor_sls | json }}
          - 'salttap/alert/missing/*':
            - {{ salttap.reactor_sls | json }}
          - 'salt/minion/*/start':
            - {{ salttap.reactor_sls | json }}
        salttap_rerun: {{ salttap.rerun | json }}
{%- endif %}
