/** A mail the processor sends, and the transports that deliver it (file, Mailpit's HTTP API, SMTP). */

export interface MailAddress {
  email: string;
  name: string;
}

export interface MailMessage {
  from: MailAddress;
  to: MailAddress[];
  subject: string;
  /** HTML body; every value taken from an event is HTML-escaped in it. */
  html: string;
  /** Plain-text part with the same content. */
  text: string;
  /**
   * Stable id of the event this mail is about: becomes the Message-ID (`<id@lookout>`) and the outbox file
   * name, so a redelivered mail can be recognised downstream too.
   */
  eventId: string;
}

export interface MailTransport {
  /** `file`, `mailpit` or `smtp`. */
  readonly kind: string;
  /** Where mails go, with no credentials in it (for logs and `/ready`). */
  readonly target: string;
  /** Resolves once the sink accepted the mail (with its id there); rejects with a MailError otherwise. */
  send(message: MailMessage): Promise<{ id: string }>;
  close(): Promise<void>;
}

/** A mail the sink did not accept; `permanent` when trying again cannot help (e.g. an address refused). */
export class MailError extends Error {
  constructor(
    message: string,
    readonly permanent = false,
  ) {
    super(message);
    this.name = 'MailError';
  }
}
