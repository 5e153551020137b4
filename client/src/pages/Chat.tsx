export default function Chat() {
  return <section><h1>Chat</h1><p>Coming soon.</p></section>;
}
