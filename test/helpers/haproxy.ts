// HAProxy in front of toolgate replicas on loopback, with the balancing, /readyz health check and retry rule of
// deploy/haproxy/haproxy.cfg (faster checks). Used by the scale bench and by tests of several replicas.

/** The configuration text: a frontend on `port`, one backend server per replica. */
export function haproxyConfig(port: number, servers: ReadonlyArray<{ name: string; port: number }>): string {
  return [
    'global',
    '    maxconn 4096',
    'defaults',
    '    mode http',
    '    timeout connect 1s',
    '    timeout client 30s',
    '    timeout server 30s',
    '    timeout http-keep-alive 5s',
    // A check waits up to 1 s, as deploy's does (its `inter 1s` doubles as the check timeout): with `inter 250ms`
    // alone, a healthy replica whose /readyz takes over 250 ms on a loaded machine is marked down after two (CI's
    // Node 24 run once saw a 503 through the balancer in test/integration/load-shedding.test.ts).
    '    timeout check 1s',
    '    retries 3',
    '    option redispatch 1',
    '    retry-on conn-failure 503',
    'frontend api',
    `    bind 127.0.0.1:${port}`,
    '    default_backend toolgate',
    'backend toolgate',
    '    balance roundrobin',
    '    option httpchk',
    '    http-check send meth GET uri /readyz',
    '    http-check expect status 200',
    '    default-server check inter 250ms fall 2 rise 2 maxconn 200',
    ...servers.map((server) => `    server ${server.name} 127.0.0.1:${server.port}`),
    '',
  ].join('\n');
}
