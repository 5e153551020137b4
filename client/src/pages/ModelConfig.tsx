export default function ModelConfig() {
  return <section><h1>ModelConfig</h1><p>Coming soon.</p></section>;
}
