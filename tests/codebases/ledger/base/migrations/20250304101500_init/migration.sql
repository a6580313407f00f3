CREATE TABLE "transfers" (
	"id" text PRIMARY KEY,
	"debit_account" text NOT NULL,
	"credit_account" text NOT NULL,
	"amount_minor" bigint NOT NULL,
	"currency" text NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"batch_id" text,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "holds" (
	"subject" text PRIMARY KEY,
	"holder" text NOT NULL,
	"expires_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "postings" (
	"id" text PRIMARY KEY,
	"transfer_id" text NOT NULL,
	"account" text NOT NULL,
	"delta_minor" bigint NOT NULL,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE INDEX "transfers_status_attempts" ON "transfers" USING btree ("status","attempts");
--> statement-breakpoint
CREATE INDEX "transfers_batch" ON "transfers" USING btree ("batch_id","id");
--> statement-breakpoint
CREATE UNIQUE INDEX "postings_transfer_account" ON "postings" USING btree ("transfer_id","account");
