/**
 * The part of oidc-provider 9's API that Lookout's IdP uses. The package ships no types and @types/oidc-provider
 * is not installed; this keeps the IdP type-checked without `any`. Names and shapes follow the package's docs.
 */
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  export interface PromptDetail {
    name: string;
    reasons: string[];
    details: {
      missingOIDCScope?: string[];
      missingOIDCClaims?: string[];
      missingResourceScopes?: Record<string, string[]>;
      [key: string]: unknown;
    };
  }

  export interface InteractionResults {
    login?: { accountId: string; amr?: string[]; acr?: string; remember?: boolean; ts?: number };
    consent?: { grantId?: string };
    error?: string;
    error_description?: string;
    [key: string]: unknown;
  }

  export interface Interaction {
    uid: string;
    prompt: PromptDetail;
    params: Record<string, unknown> & { client_id?: string; login_hint?: string; scope?: string };
    session?: { accountId?: string; uid?: string; cookie?: string };
    grantId?: string;
    returnTo: string;
    exp: number;
    lastSubmission?: InteractionResults;
  }

  export class Grant {
    constructor(properties: { accountId: string; clientId: string });
    jti: string;
    accountId: string;
    clientId: string;
    addOIDCScope(scope: string): void;
    addOIDCClaims(claims: string[]): void;
    addResourceScope(resource: string, scope: string): void;
    save(ttl?: number): Promise<string>;
    static find(id: string): Promise<Grant | undefined>;
  }

  export interface ClientInfo {
    clientId: string;
    clientAuthMethod: string;
    grantTypeAllowed(type: string): boolean;
  }

  /** What configuration callbacks see of Koa's context (only what Lookout reads). */
  export interface KoaContextWithOIDC {
    oidc: {
      client?: ClientInfo;
      params?: Record<string, unknown>;
      route?: string;
    };
  }

  export interface TokenInfo {
    kind: string;
    accountId?: string;
    clientId?: string;
    client?: ClientInfo;
  }

  export interface Account {
    accountId: string;
    claims(use: string, scope: string, claims: unknown, rejected: string[]): Promise<Record<string, unknown>> | Record<string, unknown>;
  }

  export interface Configuration {
    [key: string]: unknown;
  }

  export class Provider {
    constructor(issuer: string, configuration?: Configuration);
    readonly issuer: string;
    proxy: boolean;
    Grant: typeof Grant;
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<Interaction>;
    interactionFinished(
      req: IncomingMessage,
      res: ServerResponse,
      result: InteractionResults,
      options?: { mergeWithLastSubmission?: boolean },
    ): Promise<void>;
    on(event: string, listener: (...args: unknown[]) => void): this;
  }

  export const errors: {
    InvalidTarget: new (description?: string) => Error;
    InvalidRequest: new (description?: string) => Error;
  };

  export default Provider;
}
