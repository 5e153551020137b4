/** The identity provider's user administration API (server/idp/admin-api.ts), as the Admin page reads it. */

/** What the API shows of a user. */
export interface AdminUser {
  id: string;
  username: string;
  roles: string[];
  groups: string[];
  enrolled: boolean;
  required_actions: string[];
  created_at: string;
}
