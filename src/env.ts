/** The Worker's bindings: wrangler.toml vars, secrets and the Durable Object namespace. */
export interface Env {
  SESSION: DurableObjectNamespace;
}
