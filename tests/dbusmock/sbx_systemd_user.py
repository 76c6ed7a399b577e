# SPDX-License-Identifier: LGPL-2.1-or-later
'''A mock systemd user manager for tests/linux/test-linux-cgroup.c (python3-dbusmock
template, loaded with -t PATH).

StartTransientUnit records each call as one JSON line in parameters['log']
and answers as systemd does: a job object path, then the JobRemoved signal
with parameters.get('result', 'done').  When the job is 'done' it plays the
kernel's and systemd's part on a fake cgroup tree: it creates the scope's
directory (pids and memory delegated) under parameters['cgroup_root'] +
parameters['slice'] and moves the caller there by rewriting the fake
/proc/self/cgroup (parameters['self_cgroup']).
'''

BUS_NAME = 'org.freedesktop.systemd1'
MAIN_OBJ = '/org/freedesktop/systemd1'
MAIN_IFACE = 'org.freedesktop.systemd1.Manager'
SYSTEM_BUS = False

START_TRANSIENT_UNIT = '''
import json, os
from gi.repository import GLib
p = self.sbx_params
name, mode, props, aux = args
rec = {'method': 'StartTransientUnit', 'name': str(name), 'mode': str(mode), 'properties': {}}
for k, v in props:
    if str(k) == 'PIDs':
        rec['properties'][str(k)] = [int(x) for x in v]
    elif isinstance(v, dbus.Boolean):
        rec['properties'][str(k)] = bool(v)
    else:
        rec['properties'][str(k)] = str(v)
rec['aux'] = len(aux)
with open(p['log'], 'a') as f:
    f.write(json.dumps(rec) + '\\n')
self.sbx_job += 1
job = '/org/freedesktop/systemd1/job/%d' % self.sbx_job
result = p.get('result', 'done')
if result == 'done':
    rel = p['slice'] + '/' + str(name)
    d = p['cgroup_root'] + rel
    os.makedirs(d)
    for fn, content in (('cgroup.controllers', 'cpu memory pids\\n'), ('cgroup.subtree_control', ''),
                        ('cgroup.procs', ''), ('cgroup.type', 'domain\\n')):
        with open(os.path.join(d, fn), 'w') as f:
            f.write(content)
    with open(p['self_cgroup'], 'w') as f:
        f.write('0::' + rel + '\\n')
GLib.idle_add(lambda s=self, jid=self.sbx_job, job=job, name=str(name), result=result:
              s.EmitSignal('org.freedesktop.systemd1.Manager', 'JobRemoved', 'uoss',
                           [jid, job, name, result]) and False)
ret = dbus.ObjectPath(job)
'''


def load(mock, parameters):
    mock.sbx_params = parameters
    mock.sbx_job = 0
    mock.AddProperties(MAIN_IFACE, {'Version': 'v252'})
    mock.AddMethod(MAIN_IFACE, 'StartTransientUnit', 'ssa(sv)a(sa(sv))', 'o', START_TRANSIENT_UNIT)
