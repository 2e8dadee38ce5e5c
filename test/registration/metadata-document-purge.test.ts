import { buildTestApp } from '../helpers';
import { buildStandardPlatform } from '../factories';
import { freshDatabase, type FreshDatabase } from '../support/fresh-database';
import { json, startDocumentServer } from '../support/document-server';
import { migrateLatest } from '../../src/db';
import { cliActor } from '../../src/domain/admin';
import { presentClient } from '../../src/presenters/admin/client.presenter';

// A metadata document's stored row that never completes a token request is purged after
// UNUSED_REGISTERED_CLIENT_TTL_SECONDS like a dynamic client; the document brings it back (under a
// new id) on its next use. A database of its own, so that its clock cannot purge another test's
// clients: Postgres only (an embedded database of its own would be served in-process).
const onPostgres = process.env.TEST_DATABASE_KIND === 'postgres' ? it : it.skip;

let clock = new Date('2001-01-01T00:00:00Z').getTime();
let docs: Awaited<ReturnType<typeof startDocumentServer>>;
beforeAll(async () => {
  docs = await startDocumentServer();
});
afterAll(() => docs.close());

onPostgres('deletes an unused row past the TTL, keeps a used one; the next use stores it again', async () => {
  const fresh: FreshDatabase = await freshDatabase();
  const t = await buildTestApp(
    { ...fresh.env, OUTBOUND_CA_FILE: docs.caFile, UNUSED_REGISTERED_CLIENT_TTL_SECONDS: String(7 * 86400) },
    () => new Date(clock),
    { mailWorker: false },
  );
  try {
    await migrateLatest(t.database.db);
    const { id } = await buildStandardPlatform(t.services);
    await t.services.admin.platforms.update(cliActor(), id, { client_metadata_documents: 'on' });
    const platform = (await t.services.platforms.findPlatform(id))!;
    const documentAt = () => {
      const doc = docs.publish((req, res) =>
        json({ client_id: doc.url, redirect_uris: ['https://agent.example/cb'] }, { 'cache-control': 'no-store' })(
          req,
          res,
        ),
      );
      return doc.url;
    };
    const [unusedUrl, usedUrl] = [documentAt(), documentAt()];
    const unused = await t.services.clientMetadataDocuments.storedClient(platform, unusedUrl);
    const used = await t.services.clientMetadataDocuments.storedClient(platform, usedUrl);
    await t.services.registration.markFirstUse(used);
    // The admin API shows the row by its UUID, with the URL it goes by on the wire.
    expect(presentClient(await t.services.admin.clients.get(cliActor(), id, used.id))).toMatchObject({
      client_id: used.id,
      registration_source: 'metadata_document',
      metadata_document_url: usedUrl,
      grant_types: ['authorization_code'],
    });

    clock += 8 * 86_400_000;
    const removed = await t.services.maintenance.purgeExpired();
    expect(removed.unusedRegisteredClients).toBe(1);
    const exists = async (clientId: string) => Boolean(await t.database.db('clients').where({ id: clientId }).first());
    expect(await exists(unused.id)).toBe(false);
    expect(await exists(used.id)).toBe(true);

    const back = await t.services.clientMetadataDocuments.storedClient(platform, unusedUrl);
    expect(back).toMatchObject({ metadataDocumentUrl: unusedUrl, registrationSource: 'metadata_document' });
    expect(back.id).not.toBe(unused.id);
  } finally {
    await t.close();
    await fresh.drop();
  }
});
