{#-
  salttap remediation reactor: re-runs a job that failed or missed minions,
  on those minions only. Documented in docs/remediation.md.

  Map it in the master config for three tags, and enable it:

    reactor:
      - 'salttap/alert/failed/*':
        - /usr/share/salttap/salt/reactor/salttap_rerun.sls
      - 'salttap/alert/missing/*':
        - /usr/share/salttap/salt/reactor/salttap_rerun.sls
      - 'salt/minion/*/start':
        - /usr/share/salttap/salt/reactor/salttap_rerun.sls
    salttap_rerun:
      enabled: true

  Without `salttap_rerun: {enabled: true}` it renders to nothing.

  The alert (salttap's payload, docs/operations.md#alerts) names the job:
  jid, kind, fun, args (as published, unless args_redacted), risk, the failed
  and missing minions, and rerun_of when the job is itself a re-run. Failed
  minions are re-run at once; a missing minion when it has started since the
  job began (salt/minion/<id>/start), else at its next start. Each re-run
  carries metadata {salttap_rerun_of: <jid>}, which the minions copy into
  their returns: salttap indexes the re-run as its own job with rerun_of set,
  and this reactor never acts on that job's alert.

  State (the master's `data` store, key salttap_rerun, in its cachedir): the
  re-runs started (their times, for the limits), the re-runs waiting for a
  minion to start, and when each minion last started.
-#}
{%- set defaults = {
      'enabled': False,
      'max_risk': 'medium',
      'max_per_jid': 5,
      'max_per_window': 20,
      'window_seconds': 3600,
      'keep_seconds': 86400,
      'max_pending': 1000,
      'functions': [],
      'notify': True,
    } %}
{%- set opt = {} %}
{%- do opt.update(defaults) %}
{%- set configured = salt['config.get']('salttap_rerun', {}) %}
{%- if configured is mapping %}{% do opt.update(configured) %}{% endif %}

{%- if opt.enabled is sameas true %}
{%- set levels = ['none', 'low', 'medium', 'high', 'critical'] %}
{#- never above medium: a high or critical job is never re-run #}
{%- set max_risk = opt.max_risk if opt.max_risk in ['none', 'low', 'medium'] else 'medium' %}
{%- set now = salt['status.time']('%s') | int %}
{%- set keep = opt.keep_seconds | int %}
{%- set window = opt.window_seconds | int %}

{#- the state kept between events, pruned of what is older than keep_seconds #}
{%- set saved = salt['data.get']('salttap_rerun') %}
{%- if saved is not mapping %}{% set saved = {} %}{% endif %}
{%- set runs = [] %}
{%- for r in saved.get('runs', []) if r is mapping and (r.get('at', 0) | int) >= now - keep %}
{%-   do runs.append(r) %}
{%- endfor %}
{%- set pending = {} %}
{%- for m, waiting in (saved.get('pending', {}) or {}).items() %}
{%-   set kept = [] %}
{%-   for p in waiting if p is mapping and (p.get('at', 0) | int) >= now - keep %}{% do kept.append(p) %}{% endfor %}
{%-   if kept %}{% do pending.update({m: kept}) %}{% endif %}
{%- endfor %}
{%- set starts = {} %}
{%- for m, s in (saved.get('starts', {}) or {}).items() if s is mapping and (s.get('at', 0) | int) >= now - keep %}
{%-   do starts.update({m: s}) %}
{%- endfor %}

{%- set launches = [] %}
{%- set notes = [] %}

{#- Starts a re-run of `of` on `minions` unless a limit says no. #}
{%- macro launch(of, fun, args, minions) %}
{%-   set for_jid = runs | selectattr('of', 'equalto', of) | list %}
{%-   set in_window = runs | selectattr('at', 'ge', now - window) | list %}
{%-   if for_jid | length >= opt.max_per_jid | int %}
{%-     do notes.append({'outcome': 'skipped', 'jid': of, 'minions': minions,
                         'reason': 'max_per_jid: ' ~ for_jid | length ~ ' re-runs of this job already'}) %}
{%-   elif in_window | length >= opt.max_per_window | int %}
{%-     do notes.append({'outcome': 'skipped', 'jid': of, 'minions': minions,
                         'reason': 'max_per_window: ' ~ in_window | length ~ ' re-runs in the last '
                                   ~ window ~ ' s'}) %}
{%-   else %}
{%-     do runs.append({'at': now, 'of': of, 'fun': fun, 'args': args,
                        'tgt': minions | join(','), 'minions': minions}) %}
{%-     do launches.append({'of': of, 'fun': fun, 'args': args, 'minions': minions}) %}
{%-     do notes.append({'outcome': 'started', 'jid': of, 'minions': minions, 'fun': fun}) %}
{%-   endif %}
{%- endmacro %}

{#- The minions already re-run for `of`: each is re-run once per job. #}
{%- macro done_for(of, out) %}
{%-   for r in runs if r.of == of %}{% do out.extend(r.minions) %}{% endfor %}
{%- endmacro %}

{%- if tag.startswith('salttap/alert/failed/') or tag.startswith('salttap/alert/missing/') %}
{%-   set jid = data.get('jid', '') | string %}
{%-   set fun = data.get('fun', '') | string %}
{%-   set args = data.get('args') %}
{%-   set risk = (data.get('risk') or {}).get('level', 'critical') %}
{%-   set ours = [] %}
{%-   for r in runs if data.get('tgt_type') == 'list' and r.fun == fun and r.tgt == data.get('tgt')
                      and r.args == args %}{% do ours.append(r.of) %}{% endfor %}
{%-   set allowed = opt.functions | select('ne', '') | list %}
{%-   set reason = [] %}
{%-   if data.get('rerun_of') %}
{%-     do reason.append('a re-run of ' ~ data.get('rerun_of')) %}
{%-   elif ours %}
{%-     do reason.append('a re-run of ' ~ ours[0] ~ ' (same function, arguments and minions)') %}
{%-   elif not jid or data.get('kind') != 'job' %}
{%-     do reason.append('not a job published by the master (kind ' ~ data.get('kind') ~ ')') %}
{%-   elif not fun or ',' in fun %}
{%-     do reason.append('a multi-function job') %}
{%-   elif risk not in levels or levels.index(risk) > levels.index(max_risk) %}
{%-     do reason.append('risk ' ~ risk ~ ' is above max_risk ' ~ max_risk) %}
{%-   elif data.get('args_redacted') %}
{%-     do reason.append('its arguments were redacted or cut by salttap') %}
{%-   elif args is string or args is mapping or args is not sequence %}
{%-     do reason.append('its arguments are not known') %}
{%-   endif %}
{%-   if not reason and allowed %}
{%-     set hits = [] %}
{#-     a glob: `*` is any text; regex_match answers the groups, so the whole name is one #}
{%-     for g in allowed if fun | regex_match('^(' ~ (g | regex_escape | replace('\\*', '.*')) ~ ')$') %}{% do hits.append(g) %}{% endfor %}
{%-     if not hits %}{% do reason.append('function ' ~ fun ~ ' is not in functions') %}{% endif %}
{%-   endif %}
{%-   if reason %}
{%-     do notes.append({'outcome': 'skipped', 'jid': jid, 'reason': reason[0]}) %}
{%-   else %}
{%-     set done = [] %}
{%-     do done_for(jid, done) %}
{%-     set now_targets = [] %}
{%-     set later = [] %}
{%-     for m in data.get('failed', []) if m not in done and m not in now_targets %}{% do now_targets.append(m) %}{% endfor %}
{%-     for m in data.get('missing', []) if m not in done and m not in now_targets %}
{%-       if (starts.get(m, {}).get('stamp', '') | string) > (data.get('started_at', '') | string) %}
{%-         do now_targets.append(m) %}
{%-       else %}
{%-         do later.append(m) %}
{%-       endif %}
{%-     endfor %}
{%-     if now_targets %}{% do launch(jid, fun, args, now_targets) %}{% endif %}
{%-     set queued = [] %}
{%-     set waiting_already = [] %}
{%-     set no_room = [] %}
{%-     for m in later %}
{%-       set total = pending.values() | map('length') | sum %}
{%-       set waiting = pending.get(m, []) %}
{%-       if waiting | selectattr('jid', 'equalto', jid) | list %}
{%-         do waiting_already.append(m) %}
{%-       elif total < opt.max_pending | int %}
{%-         do pending.update({m: waiting + [{'jid': jid, 'fun': fun, 'args': args, 'at': now}]}) %}
{%-         do queued.append(m) %}
{%-       else %}
{%-         do no_room.append(m) %}
{%-       endif %}
{%-     endfor %}
{%-     if queued %}
{%-       do notes.append({'outcome': 'pending', 'jid': jid, 'minions': queued}) %}
{%-     endif %}
{%-     if no_room %}
{%-       do notes.append({'outcome': 'skipped', 'jid': jid, 'minions': no_room,
                           'reason': 'max_pending: ' ~ opt.max_pending ~ ' re-runs wait for minions already'}) %}
{%-     endif %}
{%-     if not now_targets and not queued and not no_room %}
{%-       do notes.append({'outcome': 'skipped', 'jid': jid,
                           'reason': 'every listed minion was re-run already, or waits for its start'}) %}
{%-     endif %}
{%-   endif %}

{%- elif tag.startswith('salt/minion/') and tag.endswith('/start') %}
{%-   set m = data.get('id', '') | string %}
{%-   if m %}
{%-     do starts.update({m: {'stamp': data.get('_stamp', '') | string, 'at': now}}) %}
{%-     for p in pending.pop(m, []) %}
{%-       set done = [] %}
{%-       do done_for(p.jid, done) %}
{%-       if m not in done %}{% do launch(p.jid, p.fun, p.args, [m]) %}{% endif %}
{%-     endfor %}
{%-   endif %}
{%- endif %}

{%- do salt['data.update']('salttap_rerun', {'runs': runs, 'pending': pending, 'starts': starts}) %}

{%- for l in launches %}
salttap_rerun_{{ loop.index }}_{{ l.of }}:
  local.{{ l.fun }}:
    - tgt: {{ l.minions | json }}
    - tgt_type: list
    - arg: {{ l.args | json }}
    - metadata: {{ {'salttap_rerun_of': l.of} | json }}
{% endfor %}
{%- if opt.notify is sameas true %}
{%-   for n in notes %}
salttap_rerun_note_{{ loop.index }}_{{ n.jid }}:
  runner.event.send:
    - args:
      - tag: salttap/rerun/{{ n.outcome }}/{{ n.jid }}
      - data: {{ n | json }}
{% endfor %}
{%- endif %}
{%- endif %}
