// Whether a URL's hostname names this machine's loopback interface (as the URL parser spells it): the one
// place plain http to an authorization server is accepted, since nothing on it crosses a network.
export function isLoopbackHost(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}
