/** `meshgate serve` as the process tests run it: Istio, on loopback, a port the kernel picks, no drain on SIGTERM. */
export const LOOPBACK_SERVE = [
  'serve',
  '--mesh',
  'istio',
  '--host',
  '127.0.0.1',
  '--port',
  '0',
  '--drain-seconds',
  '0',
];
