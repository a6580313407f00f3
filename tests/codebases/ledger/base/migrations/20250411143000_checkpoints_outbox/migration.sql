CREATE TABLE "settlement_checkpoints" (
	"id" text PRIMARY KEY,
	"batch_id" text NOT NULL,
	"last_transfer_id" text NOT NULL,
	"settled_count" integer NOT NULL,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "webhook_outbox" (
	"id" text PRIMARY KEY,
	"transfer_id" text NOT NULL,
	"event_type" text NOT NULL,
	"payload" jsonb NOT NULL,
	"status" text DEFAULT 'queued' NOT NULL,
	"deliveries" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE INDEX "checkpoints_batch_created" ON "settlement_checkpoints" USING btree ("batch_id","created_at");
--> statement-breakpoint
CREATE INDEX "outbox_status_next" ON "webhook_outbox" USING btree ("status","next_attempt_at");
